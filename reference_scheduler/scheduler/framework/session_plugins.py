"""One dispatcher per extension point. Each reads its point's table on the session
(extension_points.py), walks the tiers, then the plugins of a tier, skipping plugins whose point
the conf switches off (`enableXxx: false`, the flag named in each call), and says how results
combine.

Upstream: pkg/scheduler/framework/session_plugins.go.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator, Mapping, TypeVar

import numpy as np

from reference_scheduler.scheduler.api import job_info, queue_info, sub_job_info
from reference_scheduler.scheduler.framework import extension_points, interface
from reference_scheduler.scheduler.framework.session import Session

Fn = TypeVar("Fn")
Item = TypeVar("Item")


def _each_tier(ssn: Session, table: Mapping[str, Fn], flag: str) -> Iterator[list[Fn]]:
    """Per tier, the functions of its plugins in conf order, leaving out a plugin the conf
    switches off by `flag`."""
    for tier in ssn.tiers:
        fns = []
        for option in tier:
            fn = table.get(option.name)
            if fn is not None and option.enabled(flag):
                fns.append(fn)
        yield fns


def _order(ssn: Session, table: Mapping[str, Callable[[Item, Item], int]], flag: str, left: Item, right: Item) -> int:
    """First non-zero comparison wins (negative: left first)."""
    for fns in _each_tier(ssn, table, flag):
        for fn in fns:
            result = fn(left, right)
            if result != 0:
                return int(result)
    return 0


def job_order_key(ssn: Session) -> Callable[[job_info.JobInfo, job_info.JobInfo], int]:
    def compare(left: job_info.JobInfo, right: job_info.JobInfo) -> int:
        result = _order(ssn, ssn.job_order_fns, "joborder", left, right)
        if result:
            return result
        # Fallback, as upstream: older first, then by uid.
        return (left.creation, left.uid) < (right.creation, right.uid) and -1 or 1

    return compare


def queue_order_key(ssn: Session) -> Callable[[queue_info.QueueInfo, queue_info.QueueInfo], int]:
    def compare(left: queue_info.QueueInfo, right: queue_info.QueueInfo) -> int:
        result = _order(ssn, ssn.queue_order_fns, "queueorder", left, right)
        if result:
            return result
        return (left.creation, left.name) < (right.creation, right.name) and -1 or 1

    return compare


def victim_queue_first(ssn: Session, left: queue_info.QueueInfo, right: queue_info.QueueInfo, evictor: queue_info.QueueInfo) -> int:
    """Whose victims go first when two victims' jobs sit in different queues: the first plugin with
    an opinion decides (no conf flag turns this point off, as upstream), else the reverse of queue
    order. Negative: left's first. Upstream: Session.VictimQueueOrderFn."""
    for tier in ssn.tiers:
        for option in tier:
            fn = ssn.victim_queue_order_fns.get(option.name)
            result = fn(left, right, evictor) if fn is not None else 0
            if result:
                return int(result)
    return -queue_order_key(ssn)(left, right)


def task_order_key(ssn: Session) -> Callable[[job_info.TaskInfo, job_info.TaskInfo], int]:
    def compare(left: job_info.TaskInfo, right: job_info.TaskInfo) -> int:
        result = _order(ssn, ssn.task_order_fns, "taskorder", left, right)
        if result:
            return result
        left_key = (left.pod["metadata"].get("creationTimestamp", ""), _index(left), left.name)
        right_key = (right.pod["metadata"].get("creationTimestamp", ""), _index(right), right.name)
        return -1 if left_key < right_key else 1

    return compare


def _index(task: job_info.TaskInfo) -> int:
    value = (task.pod["metadata"].get("annotations") or {}).get("volcano.sh/task-index", "0")
    return int(value) if str(value).isdigit() else 0


@dataclasses.dataclass
class NodeFilter:
    """The outcome of every predicate for one task over every node of the session (matrix rows)."""

    failed: np.ndarray  # bool per node
    reason: np.ndarray  # object per node: the first failing predicate's reason, None where passed
    # bool per node: some failure there cannot be mended by evicting pods (kube-scheduler's
    # UnschedulableAndUnresolvable); a node failing only resolvable predicates is still worth
    # preempting or reclaiming on.
    unresolvable: np.ndarray

    def passed_rows(self) -> np.ndarray:
        return np.flatnonzero(~self.failed)

    def preemptable_rows(self) -> np.ndarray:
        """Nodes where evicting pods could let the task in. Upstream: PredicateForPreemptAction."""
        return np.flatnonzero(~self.unresolvable)


def predicate_nodes(ssn: Session, task: job_info.TaskInfo) -> NodeFilter:
    """All must pass; a node's reason is its first failure in tier and plugin order. Each plugin's
    `batchPredicate` (task -> [(failed per node, reason or reasons per node[, resolvable])])
    covers every node at once; a check that does not say it is resolvable by eviction is not.
    Upstream: Session.PredicateFn."""
    count = len(ssn.matrix)
    failed = np.zeros(count, dtype=bool)
    unresolvable = np.zeros(count, dtype=bool)
    reason = np.full(count, None, dtype=object)
    for fns in _each_tier(ssn, ssn.batch_predicate_fns, "predicate"):
        for fn in fns:
            for check in fn(task):
                fails, why = check[0], check[1]
                if not (len(check) > 2 and check[2]):
                    unresolvable |= fails
                newly = fails & ~failed
                if newly.any():
                    reason[newly] = why if isinstance(why, str) else why[newly]
                    failed |= newly
    return NodeFilter(failed, reason, unresolvable)


def node_scores(ssn: Session, task: job_info.TaskInfo, rows: np.ndarray) -> np.ndarray:
    """The sum of every plugin's `batchNodeOrder` score (task -> score per node) at `rows`."""
    total = np.zeros(len(rows))
    if not len(rows):
        return total
    for fns in _each_tier(ssn, ssn.batch_node_order_fns, "nodeorder"):
        for fn in fns:
            total += np.asarray(fn(task), dtype=float)[rows]
    return total


def hyper_node_scores(ssn: Session, job: job_info.JobInfo, candidates: dict[str, list[str]]) -> dict[str, float]:
    """The sum of every plugin's `hyperNodeOrder` score (job, {HyperNode: its nodes} -> {HyperNode:
    score}); a HyperNode no plugin scored has 0. Upstream: Session.HyperNodeOrderMapFn."""
    total = {name: 0.0 for name in candidates}
    for fns in _each_tier(ssn, ssn.hyper_node_order_fns, "hypernodeorder"):
        for fn in fns:
            for name, score in fn(job, candidates).items():
                if name in total:
                    total[name] += float(score)
    return total


def sub_job_hyper_node_scores(ssn: Session, sub: sub_job_info.SubJob, candidates: Mapping[str, frozenset[str]]) -> dict[str, float] | None:
    """The sum of every plugin's score of each candidate HyperNode for the sub-job; None when no
    plugin ranks sub-jobs' HyperNodes, and so none confines them."""
    fns = [fn for tier in _each_tier(ssn, ssn.sub_job_hyper_node_order_fns, "hypernodeorder") for fn in tier]
    if not fns:
        return None
    total = {name: 0.0 for name in candidates}
    for fn in fns:
        for name, score in fn(sub, candidates).items():
            if name in total:
                total[name] += float(score)
    return total


def sub_jobs_confined(ssn: Session) -> bool:
    """Whether a plugin confines jobs with sub-jobs to HyperNodes (ranks their HyperNodes)."""
    return any(fns for fns in _each_tier(ssn, ssn.sub_job_hyper_node_order_fns, "hypernodeorder"))


def job_valid(ssn: Session, job: job_info.JobInfo) -> tuple[str, str] | None:
    """The first plugin that finds the job invalid: (reason, message); None when valid."""
    for fns in _each_tier(ssn, ssn.job_valid_fns, "jobvalid"):
        for fn in fns:
            result = fn(job)
            if result is not None:
                return result
    return None


def job_ready(ssn: Session, job: job_info.JobInfo) -> bool:
    """All must pass."""
    return all(fn(job) for fns in _each_tier(ssn, ssn.job_ready_fns, "jobready") for fn in fns)


def _vote(ssn: Session, table: Mapping[str, Callable[[job_info.JobInfo], extension_points.Vote]], flag: str, job: job_info.JobInfo) -> bool:
    """A Reject anywhere rejects; a tier with a Permit permits; otherwise the next tier decides.
    Nothing said at all permits."""
    for fns in _each_tier(ssn, table, flag):
        permitted = False
        for fn in fns:
            vote = fn(job)
            if vote < 0:
                return False
            if vote > 0:
                permitted = True
        if permitted:
            return True
    return True


def job_pipelined(ssn: Session, job: job_info.JobInfo) -> bool:
    return _vote(ssn, ssn.job_pipelined_fns, "jobpipelined", job)


def job_enqueueable(ssn: Session, job: job_info.JobInfo) -> bool:
    return _vote(ssn, ssn.job_enqueueable_fns, "jobenqueued", job)


def job_enqueued(ssn: Session, job: job_info.JobInfo) -> None:
    for fns in _each_tier(ssn, ssn.job_enqueued_fns, "jobenqueued"):
        for fn in fns:
            fn(job)


def allocatable(ssn: Session, queue: queue_info.QueueInfo, task: job_info.TaskInfo) -> bool:
    """All must pass."""
    return all(fn(queue, task) for fns in _each_tier(ssn, ssn.allocatable_fns, "allocatable") for fn in fns)


def overused(ssn: Session, queue: queue_info.QueueInfo) -> bool:
    """Any plugin saying so makes the queue overused."""
    return any(fn(queue) for fns in _each_tier(ssn, ssn.overused_fns, "overused") for fn in fns)


def _victims(ssn: Session, table: Mapping[str, extension_points.EvictableFn], flag: str, evictor: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    """Each plugin that does not abstain narrows the candidates (an intersection); the first tier
    where they agree on some victims decides. An empty answer ends its tier without a decision, so
    the next tier is asked, as upstream does. Upstream: Session.Preemptable, Session.Reclaimable."""
    for fns in _each_tier(ssn, table, flag):
        victims: list[job_info.TaskInfo] | None = None
        for fn in fns:
            chosen, vote = fn(evictor, candidates)
            if vote == interface.ABSTAIN:
                continue
            if not chosen:
                victims = None
                break
            if victims is None:
                victims = list(chosen)
            else:
                keep = {t.uid for t in chosen}
                victims = [t for t in victims if t.uid in keep]
        if victims:
            return victims
    return []


def preemptable(ssn: Session, preemptor: job_info.TaskInfo, preemptees: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    return _victims(ssn, ssn.preemptable_fns, "preemptable", preemptor, preemptees)


def reclaimable(ssn: Session, reclaimer: job_info.TaskInfo, reclaimees: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    return _victims(ssn, ssn.reclaimable_fns, "reclaimable", reclaimer, reclaimees)


def job_starving(ssn: Session, job: job_info.JobInfo) -> bool:
    """Every plugin of the first tier that has an opinion must agree; no opinion: not starving."""
    for fns in _each_tier(ssn, ssn.job_starving_fns, "jobstarving"):
        if fns:
            return all(fn(job) for fn in fns)
    return False


def victim_tasks(ssn: Session, tasks: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    """Running tasks the plugins would have evicted (shuffle): the union of what each plugin of
    a tier names, from the first tier that names any. The conf switches a plugin's part off with
    `enabledVictim: false` (upstream's spelling, hence the flag `dvictim` once `enable` is cut).
    Upstream: Session.VictimTasks."""
    for fns in _each_tier(ssn, ssn.victim_tasks_fns, "dvictim"):
        chosen: dict[str, job_info.TaskInfo] = {}
        for fn in fns:
            for task in fn(tasks):
                chosen.setdefault(task.uid, task)
        if chosen:
            return list(chosen.values())
    return []


def preemptive(ssn: Session, queue: queue_info.QueueInfo, tasks: list[job_info.TaskInfo]) -> bool:
    """May this queue take more to place these tasks by reclaiming? All must agree."""
    return all(fn(queue, tasks) for fns in _each_tier(ssn, ssn.preemptive_fns, "preemptive") for fn in fns)


def unified_evictable(ssn: Session, context: extension_points.EvictionContext, candidates: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    """gangpreempt's and gangreclaim's victims among a domain's candidates, their order kept: per
    tier, each plugin that does not abstain narrows them (an empty answer ends the tier); the
    first tier that leaves some decides. No `enable...` switch applies: upstream consults none
    for this point. Upstream: Session.UnifiedEvictable (v1.15)."""
    for tier in ssn.tiers:
        victims: list[job_info.TaskInfo] | None = None
        for option in tier:
            fn = ssn.unified_evictable_fns.get(option.name)
            if fn is None:
                continue
            chosen, vote = fn(context, candidates)
            if vote == interface.ABSTAIN:
                continue
            if not chosen:
                victims = None
                break
            keep = {t.uid for t in chosen}
            victims = [t for t in (candidates if victims is None else victims) if t.uid in keep]
        if victims:
            return victims
    return []


__all__ = ["interface"]
