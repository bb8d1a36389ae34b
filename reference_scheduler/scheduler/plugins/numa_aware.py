"""numa-aware: place Guaranteed pods only where the node's kubelet could give their exclusive CPUs
the NUMA alignment its topology manager demands, and prefer nodes where they span fewer NUMA
nodes. The node's facts come from its Numatopology (see numa_aware_topology.py); the judgement
itself is in numa_aware_hints.py.

Which pods are judged: Guaranteed pods only (others run on the kubelet's shared CPU pool). A pod
whose `volcano.sh/numa-topology-policy` annotation names a policy (the job controller copies a
Job task's `topologyPolicy`) may only go to a node with a Numatopology, the static CPU manager
and that very topology policy, whose CPU list is not empty; each refusal has its own reason. A
Guaranteed pod with no policy, or `none`, is judged by the node's kubelet policy where the node
has the static CPU manager and a topology policy other than `none`, and is not judged elsewhere.
On a node that judges it, a pod whose container the policy does not admit is refused with
`container <name> cannot be assigned by numa`.

Score (only for pods that name a policy other than `none`): 100 less 100 x the NUMA nodes its
CPUs would span on the node / the most any admitted node needs, times `weight` (default 1): a
node where it fits in one NUMA node beats one where it straddles. The kit takes the most over the
nodes this plugin admitted where the request fits, as upstream takes it over the nodes that passed
the predicates (the order of nodes is the same either way).

CPUs already given: a placement made in this session takes its CPUs from the node at once and a
discarded one gives them back; at the session's end the CPUs of every placement are remembered
by pod (`Session.cpu_assignments`, kept by the cache, as upstream narrows the cache's
NumaSchedulerInfo). The kit's Numatopology is written once and never updated by a resource
exporter, so the kit stands in for it: a remembered pod's CPUs count as used while the pod holds
its node and are free again once it has ended or gone; a pod holding CPUs the scheduler did not
give (placed by another scheduler, or before a restart) is given CPUs as the kubelet's static CPU
manager would, oldest first.

Upstream: pkg/scheduler/plugins/numaaware/numaaware.go, pkg/scheduler/api/numa_info.go,
pkg/scheduler/cache/cache.go (UpdateSchedulerNumaInfo).
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import extension_points
from reference_scheduler.scheduler.framework.session import EventHandler, Session
from reference_scheduler.scheduler.plugins import numa_aware_hints as hints
from reference_scheduler.scheduler.plugins import numa_aware_topology as topology

log = logging.getLogger(__name__)
NAME = "numa-aware"
WEIGHT_ARGUMENT = "weight"
MAX_NODE_SCORE = 100
STATIC = "static"
# Reasons as Volcano gives them (they reach the PodGroup's Unschedulable message).
NUMA_INFO_EMPTY = "numa info is empty"
NOT_STATIC = "cpu manager policy isn't static"
CPU_LIST_EMPTY = "cpu allocatable map is empty"


def policy_differs(task_policy: str, node_policy: str) -> str:
    return f"task topology policy[{task_policy}] is different with node[{node_policy}]"


def cannot_assign(container: str) -> str:
    return f"container {container} cannot be assigned by numa"


def filter_reason(task_policy: str, topo: topology.NodeTopology | None, free: frozenset[int] | None) -> tuple[bool, str]:
    """(judge the pod's NUMA alignment on this node, why the node is refused outright).
    Upstream: filterNodeByPolicy."""
    if task_policy not in ("", hints.NONE):
        if topo is None:
            return False, NUMA_INFO_EMPTY
        if topo.cpu_manager_policy != STATIC:
            return False, NOT_STATIC
        if task_policy != topo.topology_policy:
            return False, policy_differs(task_policy, topo.topology_policy)
        if not free:
            return False, CPU_LIST_EMPTY
        return True, ""
    judged = topo is not None and topo.cpu_manager_policy == STATIC and topo.topology_policy not in ("", hints.NONE)
    return judged, ""


def _weight(arguments: Mapping[str, Any]) -> int:
    try:
        return int(arguments.get(WEIGHT_ARGUMENT, 1))
    except (TypeError, ValueError):
        log.warning("numa-aware: %s=%r is not an integer; using 1", WEIGHT_ARGUMENT, arguments.get(WEIGHT_ARGUMENT))
        return 1


class NumaAware:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.weight = _weight(arguments)
        self.names: list[str] = []  # the session's nodes in matrix row order
        self.topologies: dict[str, topology.NodeTopology] = {}
        self.reserved: dict[str, frozenset[int]] = {}
        # Per node, the CPUs free for exclusive use (None: its Numatopology lists none at all).
        self.free: dict[str, frozenset[int] | None] = {}
        # Per task, the CPUs it would get on each node that admitted it, and the nodes that
        # admitted it the last time it was judged.
        self.assigned: dict[str, dict[str, frozenset[int]]] = {}
        self.admitted: dict[str, list[str]] = {}
        # Tasks placed in this session: uid -> (node, CPUs).
        self.placed: dict[str, tuple[str, frozenset[int]]] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.names = list(ssn.matrix.names)
        self.topologies = {name: topology.read(obj) for name, obj in ssn.numatopologies.items() if name in ssn.nodes}
        for name, topo in self.topologies.items():
            self.reserved[name] = hints.reserved(topo)
            cpus = topo.allocatable.get(topology.CPU)
            self.free[name] = None if cpus is None else frozenset(cpus)
        self._count_cpus_in_use(ssn)
        ssn.add_batch_predicate_fn(NAME, self.predicate)
        ssn.add_batch_node_order_fn(NAME, lambda task: self.scores(ssn, task))
        ssn.event_handlers.append(EventHandler(allocate=self.allocated, deallocate=self.deallocated))

    def on_session_close(self, ssn: Session) -> None:
        ssn.cpu_assignments.update(self.placed)

    def _count_cpus_in_use(self, ssn: Session) -> None:
        """Take off each node's free CPUs those of the pods holding it: remembered ones as they
        were given, the others as the kubelet would give them. Forget pods that are gone."""
        memory = ssn.cpu_assignments
        for uid, (name, _) in list(memory.items()):
            node = ssn.nodes.get(name)
            if node is None or uid not in node.tasks or name not in self.topologies:
                del memory[uid]
        for name, topo in self.topologies.items():
            unknown = []
            for uid, task in ssn.nodes[name].tasks.items():
                if uid in memory:
                    self._take(name, memory[uid][1])
                elif topo.cpu_manager_policy == STATIC and topology.is_guaranteed(task.pod):
                    unknown.append(task)
            for task in sorted(unknown, key=lambda t: (t.pod["metadata"].get("creationTimestamp", ""), t.namespace, t.name)):
                verdict = hints.judge_pod(topo, topo.topology_policy, self._available(name), task.pod)
                memory[task.uid] = (name, verdict.cpus)
                self._take(name, verdict.cpus)

    def _take(self, node: str, cpus: frozenset[int]) -> None:
        free = self.free.get(node)
        if free is not None:
            self.free[node] = free - cpus

    def _available(self, node: str) -> frozenset[int] | None:
        free = self.free.get(node)
        return None if free is None else free - self.reserved[node]

    def predicate(self, task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
        if not topology.is_guaranteed(task.pod):
            return []
        policy = topology.task_policy(task.pod)
        if policy in ("", hints.NONE) and not self.topologies:
            return []
        plain = policy in ("", hints.NONE)
        failed = np.zeros(len(self.names), dtype=bool)
        reasons = np.full(len(self.names), None, dtype=object)
        admitted: dict[str, frozenset[int]] = {}
        for i, name in enumerate(self.names):
            topo = self.topologies.get(name)
            if plain and topo is None:
                continue  # not judged, and the common case: skip it cheaply
            judged, reason = filter_reason(policy, topo, self.free.get(name))
            if reason:
                failed[i], reasons[i] = True, reason
            if not judged or topo is None:
                continue
            verdict = hints.judge_pod(topo, topo.topology_policy, self._available(name), task.pod)
            if verdict.refused:
                failed[i], reasons[i] = True, cannot_assign(verdict.refused)
                continue
            admitted[name] = verdict.cpus
        self.assigned.setdefault(task.uid, {}).update(admitted)
        self.admitted[task.uid] = list(admitted)
        log.debug("numa-aware: %s admitted on %s", task.name, {n: sorted(c) for n, c in admitted.items()})
        return [(failed, reasons)] if failed.any() else []

    def scores(self, ssn: Session, task: job_info.TaskInfo) -> np.ndarray:
        """Upstream: batchNodeOrderFn with NormalizeScore(100, reverse) in integers."""
        out = np.zeros(len(ssn.matrix))
        if task.uid not in self.assigned or topology.task_policy(task.pod) in ("", hints.NONE):
            return out
        fits = ssn.request(task).fits(ssn.matrix.future_idle())
        spans: dict[int, int] = {}
        for name in self.admitted.get(task.uid, []):
            row = ssn.matrix.index[name]
            if fits[row]:
                cpus = self.assigned[task.uid][name]
                spans[row] = len({self.topologies[name].cpus[c].numa for c in cpus if c in self.topologies[name].cpus})
        most = max(spans.values(), default=0)
        for row, span in spans.items():
            share = MAX_NODE_SCORE * span // most if most else 0
            out[row] = (MAX_NODE_SCORE - share) * self.weight
        return out

    def allocated(self, task: job_info.TaskInfo) -> None:
        cpus = self.assigned.get(task.uid, {}).get(task.node_name)
        if cpus is None:
            return
        self._take(task.node_name, cpus)
        self.placed[task.uid] = (task.node_name, cpus)

    def deallocated(self, task: job_info.TaskInfo) -> None:
        # The task's node is looked up here: a discarded placement has already forgotten it.
        entry = self.placed.pop(task.uid, None)
        if entry is None:
            return
        name, cpus = entry
        free = self.free.get(name)
        if free is not None:
            self.free[name] = free | cpus
