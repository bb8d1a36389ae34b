"""What the numa-aware plugin reads: a node's Numatopology (nodeinfo.volcano.sh/v1alpha1) as the
kubelet's CPU layout, and a pod's QoS class and exclusive CPU requests as the kubelet judges them.

A Numatopology (one per node, named after it, written by Volcano's resource exporter) carries
`spec.policies` (`CPUManagerPolicy`, `TopologyManagerPolicy`), `spec.numares.<resource>`
(`allocatable`: a Linux cpuset list of the CPUs free for exclusive use, `capacity`),
`spec.cpuDetail` (CPU id -> `numa`, `socket`, `core`) and `spec.resReserved` (the kubelet's
reservation, e.g. `cpu: "2"`).

Upstream: pkg/scheduler/api/numa_info.go (NumatopoInfo), pkg/scheduler/cache/event_handlers.go
(getNumaInfo), pkg/scheduler/api/pod_info.go (GetPodTopologyInfo); the QoS rule is
kubernetes' pkg/apis/core/v1/helper/qos (GetPodQOS).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from typing import Any, Iterable, Mapping

from reference_scheduler.kube import quantity

log = logging.getLogger(__name__)
POLICY_ANNOTATION = "volcano.sh/numa-topology-policy"
CPU_MANAGER_POLICY = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY = "TopologyManagerPolicy"
CPU = "cpu"
GUARANTEED = "Guaranteed"
_QOS_RESOURCES = ("cpu", "memory")


@dataclasses.dataclass(frozen=True)
class CpuInfo:
    numa: int
    socket: int
    core: int


@dataclasses.dataclass(frozen=True)
class NodeTopology:
    """One node's Numatopology, parsed."""

    name: str
    cpu_manager_policy: str
    topology_policy: str
    # Per resource (only `cpu` in practice): the CPU ids free for exclusive use.
    allocatable: Mapping[str, frozenset[int]]
    cpus: Mapping[int, CpuInfo]
    # The reservation in whole CPUs (a fraction counts as a whole one: it cannot be exclusive).
    reserved_cpus: int

    def numa_nodes(self) -> list[int]:
        return sorted({info.numa for info in self.cpus.values()})

    def cpus_in(self, numa_nodes: Iterable[int]) -> frozenset[int]:
        wanted = set(numa_nodes)
        return frozenset(cpu for cpu, info in self.cpus.items() if info.numa in wanted)


def parse_cpuset(text: str) -> frozenset[int]:
    """`0-3,8,10-11` as a set of CPU ids; an unreadable list is logged and read as empty, as
    upstream does."""
    out: set[int] = set()
    try:
        for part in str(text).split(","):
            part = part.strip()
            if not part:
                continue
            low, _, high = part.partition("-")
            out.update(range(int(low), int(high or low) + 1))
    except ValueError:
        log.warning("numa-aware: %r is not a cpuset list; read as empty", text)
        return frozenset()
    return frozenset(out)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def read(obj: Mapping[str, Any]) -> NodeTopology:
    spec = obj.get("spec") or {}
    policies = spec.get("policies") or {}
    allocatable = {name: parse_cpuset((info or {}).get("allocatable") or "") for name, info in (spec.get("numares") or {}).items()}
    cpus = {}
    for key, detail in (spec.get("cpuDetail") or {}).items():
        detail = detail or {}
        cpus[_int(key)] = CpuInfo(_int(detail.get("numa")), _int(detail.get("socket")), _int(detail.get("core")))
    reserved = 0
    text = (spec.get("resReserved") or {}).get(CPU)
    if text is not None:
        try:
            reserved = math.ceil(round(quantity.parse(text) * 1000) / 1000)
        except ValueError:
            log.warning("numa-aware: Numatopology %s: resReserved cpu %r is not a quantity", obj["metadata"]["name"], text)
    return NodeTopology(
        name=obj["metadata"]["name"],
        cpu_manager_policy=str(policies.get(CPU_MANAGER_POLICY) or ""),
        topology_policy=str(policies.get(TOPOLOGY_MANAGER_POLICY) or ""),
        allocatable=allocatable,
        cpus=cpus,
        reserved_cpus=reserved,
    )


def task_policy(pod: Mapping[str, Any]) -> str:
    """The pod's own topology policy (the job controller copies a Job task's `topologyPolicy`)."""
    return str(((pod.get("metadata") or {}).get("annotations") or {}).get(POLICY_ANNOTATION) or "")


def _milli(value: Any) -> int:
    try:
        return round(quantity.parse(value) * 1000)
    except ValueError:
        return 0


def is_guaranteed(pod: Mapping[str, Any]) -> bool:
    """The pod's QoS class is Guaranteed: the class the API server wrote in its status, else the
    rule: every container (init containers too) limits cpu and memory, and the requests equal the
    limits."""
    written = (pod.get("status") or {}).get("qosClass")
    if written:
        return bool(written == GUARANTEED)
    spec = pod.get("spec") or {}
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    every_limit = True
    for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        for kind, into in (("requests", requests), ("limits", limits)):
            for name, value in (resources.get(kind) or {}).items():
                amount = _milli(value)
                if name in _QOS_RESOURCES and amount > 0:
                    into[name] = into.get(name, 0) + amount
        limited = {n for n, v in (resources.get("limits") or {}).items() if n in _QOS_RESOURCES and _milli(v) > 0}
        every_limit = every_limit and limited == set(_QOS_RESOURCES)
    if not requests and not limits:
        return False
    return every_limit and requests == limits


def exclusive_cpus(container: Mapping[str, Any]) -> int:
    """The whole CPUs a container of a Guaranteed pod gets for itself: its cpu request when that is
    a whole number, else none (a fraction runs on the shared pool). Upstream: guaranteedCPUs in
    provider/cpumanager/cpu_mng.go."""
    request = ((container.get("resources") or {}).get("requests") or {}).get(CPU)
    if request is None:
        return 0
    milli = _milli(request)
    return milli // 1000 if milli > 0 and milli % 1000 == 0 else 0

