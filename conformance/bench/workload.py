"""What the bench creates: PodGroups and their pods (the scheduler alone), or Volcano Jobs (the
controller makes the PodGroups and pods: end to end), as requests for the lean client.

Names carry the gang: PodGroup `pg-G` has pods `pg-G-I`; Job `j-G` has pods `j-G-t-I` (Volcano's
`<job>-<task>-<index>`). So a pod's gang is its name without the last `-I`, for both.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Sequence

from conformance.bench import wire

PODS = "podgroups"
JOBS = "jobs"
WORKLOADS = (PODS, JOBS)
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")
BATCH = ("batch.volcano.sh", "v1alpha1")
CPU_PER_POD = "1"
MEMORY_PER_POD = "64Mi"


@dataclasses.dataclass(frozen=True)
class Shape:
    """`pods` pods in gangs of `gang` (minMember / minAvailable), in `namespace`."""

    pods: int
    gang: int
    namespace: str
    kind: str = PODS

    @property
    def groups(self) -> int:
        return self.pods // self.gang

    def group_name(self, g: int) -> str:
        return f"pg-{g}" if self.kind == PODS else f"j-{g}"

    def pod_names(self, g: int) -> list[str]:
        prefix = f"pg-{g}" if self.kind == PODS else f"j-{g}-t"
        return [f"{prefix}-{i}" for i in range(self.gang)]


def gang_of(pod: str) -> str:
    """The gang a bench pod belongs to (see the module's naming)."""
    return pod.rsplit("-", 1)[0]


def _container() -> dict[str, Any]:
    return {"name": "main", "image": "bench", "resources": {"requests": {"cpu": CPU_PER_POD, "memory": MEMORY_PER_POD}}}


def podgroup(name: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": "/".join(SCHEDULING), "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": members, "queue": "default", "minResources": {"cpu": str(members)}},
    }


def pod(name: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "terminationGracePeriodSeconds": 0, "containers": [_container()]},
    }


def job(name: str, members: int) -> dict[str, Any]:
    """A Volcano Job of one task: every field Volcano's controller needs without its webhook's
    defaults (queue, schedulerName, minAvailable, the task's name) is set anyway."""
    template = {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0, "containers": [_container()]}}
    return {
        "apiVersion": "/".join(BATCH), "kind": "Job",
        "metadata": {"name": name},
        "spec": {"minAvailable": members, "schedulerName": "volcano", "queue": "default", "tasks": [{"name": "t", "replicas": members, "template": template}]},
    }


def _post(path: str, body: dict[str, Any], group: int) -> wire.Request:
    return wire.Request("POST", path, json.dumps(body, separators=(",", ":")).encode(), group)


def creates(shape: Shape) -> list[wire.Request]:
    """The workload's creates, gang by gang: each PodGroup then its pods, or each Job."""
    ns = shape.namespace
    out = []
    for g in range(shape.groups):
        name = shape.group_name(g)
        if shape.kind == JOBS:
            out.append(_post(wire.api_path(*BATCH, "jobs", ns), job(name, shape.gang), g))
            continue
        out.append(_post(wire.api_path(*SCHEDULING, "podgroups", ns), podgroup(name, shape.gang), g))
        out += [_post(wire.api_path("", "v1", "pods", ns), pod(p, name), g) for p in shape.pod_names(g)]
    return out


def pod_creates(shape: Shape) -> list[wire.Request]:
    """Only the pods (the ceiling's raw create rate)."""
    ns = shape.namespace
    return [_post(wire.api_path("", "v1", "pods", ns), pod(p, shape.group_name(g)), g) for g in range(shape.groups) for p in shape.pod_names(g)]


def binds(shape: Shape, nodes: Sequence[str]) -> list[wire.Request]:
    """A Binding for every pod, the nodes taken in turn (the ceiling's raw bind rate)."""
    ns = shape.namespace
    out = []
    names = [p for g in range(shape.groups) for p in shape.pod_names(g)]
    for i, name in enumerate(names):
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"apiVersion": "v1", "kind": "Node", "name": nodes[i % len(nodes)]}}
        out.append(_post(wire.api_path("", "v1", "pods", ns, name, "binding"), body, i))
    return out
