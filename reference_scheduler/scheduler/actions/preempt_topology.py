"""Topology-aware preemption (preempt's `enableTopologyAwarePreemption: true`): victims are chosen
per node as kube-scheduler's default preemption chooses them, so a preemptor that fails a
resolvable predicate (pod anti-affinity, host ports, topology spread) gets a node where it will
really fit, not merely one with room.

On each candidate node, the allowed victims the plugins agree on are taken off one by one, least
important first, until the preemptor fits the node's resources, its queue allows it, and every
predicate passes; then each of them is put back, in the order taken, if the preemptor still fits
with it there. Those that could not be put back are the node's victims. Of the first nodes that
yield victims (at least minCandidateNodesAbsolute, or minCandidateNodesPercentage of the
candidates, at most maxCandidateNodesAbsolute), the one whose most important victim is least
important wins, then the smallest sum of victim priorities, the fewest victims, the latest start
of the most important victims; its victims are evicted and the preemptor pipelined there.

Kit choice: upstream starts the search at a random node; the reference goes in its usual node
order (best score, then name), so a run repeats.

Upstream: pkg/scheduler/actions/preempt/preempt.go (topologyAwarePreempt, SelectVictimsOnNode,
SelectCandidate, pickOneNodeForPreemption).
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Callable, Iterator

from reference_scheduler.scheduler.actions import victims as victims_mod
from reference_scheduler.scheduler.api import job_info, node_info, queue_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

ENABLE_KEY = "enableTopologyAwarePreemption"
# Upstream's defaults for how many nodes with victims are compared.
MIN_CANDIDATES_PERCENTAGE = ("minCandidateNodesPercentage", 10)
MIN_CANDIDATES_ABSOLUTE = ("minCandidateNodesAbsolute", 1)
MAX_CANDIDATES_ABSOLUTE = ("maxCandidateNodesAbsolute", 100)
Filter = Callable[[job_info.TaskInfo], bool]


def enabled(ssn: Session, action: str) -> bool:
    return ssn.features.topology_aware_preemption and bool(ssn.conf.action_argument(action, ENABLE_KEY, False))


@dataclasses.dataclass
class Candidate:
    node: node_info.NodeInfo
    victims: list[job_info.TaskInfo]


@contextlib.contextmanager
def _without(ssn: Session, node: node_info.NodeInfo, tasks: list[job_info.TaskInfo]) -> Iterator[None]:
    """The session as if `tasks` were gone from `node`, restored on exit (plugins are told as
    they are for an eviction undone). Upstream: SimulateRemoveTaskFn / SimulateAddTaskFn."""
    for task in tasks:
        node.remove_task(task)
        for handler in ssn.event_handlers:
            handler.deallocate(task)
    try:
        yield
    finally:
        for task in reversed(tasks):
            node.add_task(task)
            for handler in ssn.event_handlers:
                handler.allocate(task)


def _fits(ssn: Session, queue: queue_info.QueueInfo, preemptor: job_info.TaskInfo, node: node_info.NodeInfo) -> bool:
    if not session_plugins.allocatable(ssn, queue, preemptor) or not preemptor.resreq.less_equal(node.future_idle()):
        return False
    return not bool(session_plugins.predicate_nodes(ssn, preemptor).failed[node.row])


def victims_on_node(ssn: Session, preemptor: job_info.TaskInfo, queue: queue_info.QueueInfo, node: node_info.NodeInfo, allowed: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    """The fewest of `allowed` whose eviction lets the preemptor in; empty when none does.
    Upstream: SelectVictimsOnNode."""
    agreed = session_plugins.preemptable(ssn, preemptor, allowed)
    if not victims_mod.enough(preemptor, node, agreed):
        return []
    taken: list[job_info.TaskInfo] = []
    for victim in victims_mod.in_eviction_order(ssn, preemptor, agreed):
        taken.append(victim)
        with _without(ssn, node, taken):
            if _fits(ssn, queue, preemptor, node):
                break
    with _without(ssn, node, taken):
        if not taken or session_plugins.predicate_nodes(ssn, preemptor).failed[node.row]:
            return []
    victims: list[job_info.TaskInfo] = []
    # Reprieve: each taken pod goes back if the preemptor still fits with it.
    for i, candidate in enumerate(taken):
        rest = [t for t in taken[i + 1:]] + victims
        with _without(ssn, node, rest):
            if not _fits(ssn, queue, preemptor, node):
                victims.append(candidate)
    return victims


def _earliest_start_of_most_important(victims: list[job_info.TaskInfo]) -> str:
    """RFC 3339 times compare as strings; a pod not started yet counts as starting now (last)."""
    top = max(v.priority for v in victims)
    return min((v.pod.get("status") or {}).get("startTime") or "9999" for v in victims if v.priority == top)


def _pick(candidates: list[Candidate]) -> Candidate:
    """Each rule keeps the candidates it rates best and the next one breaks their tie: the least
    important most important victim, the smallest sum of victim priorities, the fewest victims,
    the latest start of the most important victims; then the first.
    Upstream: pickOneNodeForPreemption (whose PDB rule counts nothing)."""
    rules: list[Callable[[Candidate], object]] = [
        lambda c: -max(v.priority for v in c.victims),
        lambda c: -sum(v.priority for v in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_start_of_most_important(c.victims),
    ]
    for rule in rules:
        best = max(rule(c) for c in candidates)  # type: ignore[type-var]
        candidates = [c for c in candidates if rule(c) == best]
        if len(candidates) == 1:
            break
    return candidates[0]


def _wanted(ssn: Session, action: str, nodes: int) -> int:
    percentage = ssn.conf.action_argument(action, *MIN_CANDIDATES_PERCENTAGE)
    least = ssn.conf.action_argument(action, *MIN_CANDIDATES_ABSOLUTE)
    most = ssn.conf.action_argument(action, *MAX_CANDIDATES_ABSOLUTE)
    return min(max(nodes * percentage // 100, least), most, nodes)


def preempt(ssn: Session, stmt: Statement, preemptor: job_info.TaskInfo, eligible: Filter, action: str) -> bool:
    """Evict the best candidate node's victims and pipeline the preemptor there.
    Upstream: topologyAwarePreempt."""
    job = ssn.jobs[preemptor.job]
    queue = ssn.queues[job.queue]
    nodes = victims_mod.candidate_nodes(ssn, preemptor)
    wanted = _wanted(ssn, action, len(nodes))
    found: list[Candidate] = []
    for node in nodes:
        allowed = [t for t in node.tasks.values() if t.job in ssn.jobs and eligible(t)]
        victims = victims_on_node(ssn, preemptor, queue, node, allowed)
        if victims:
            found.append(Candidate(node, victims))
            if len(found) >= wanted:
                break
    if not found:
        return False
    best = _pick(found)
    for victim in best.victims:
        stmt.evict(victim, action)
    stmt.pipeline(preemptor, best.node)
    return True
