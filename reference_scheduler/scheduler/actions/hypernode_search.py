"""allocate's search for a HyperNode that holds a whole job with a hard network topology.

Tiers are walked from the lowest up, never above the job's highestTierAllowed, and the walk stops
at the first tier where some HyperNode holds the job. Each HyperNode of that tier is tried on its
own: the job's pending tasks are placed on its nodes only, the placements noted and undone. Of the
HyperNodes that made the job ready, the one with the highest score wins: the plugins'
`hyperNodeOrder` scores plus the scores of the nodes the trial chose; its placements are replayed
into the statement allocate commits. A job already placed in part (the HyperNode recorded on its
PodGroup) may only grow into HyperNodes whose least common ancestor with that one is still within
highestTierAllowed, so a lost pod comes back beside its siblings.

Kit choices where upstream leaves it to chance or keeps state longer: HyperNodes are tried in name
order and a tie goes to the first by name (upstream: map order, then a random pick); a trial that
does not make the job ready is undone even if the job could be pipelined; node scores are summed
for one cycle (upstream keeps them for the scheduler's life).

Upstream: pkg/scheduler/actions/allocate/allocate.go (allocateResourceForTasksWithTopology,
selectBestHyperNode), pkg/scheduler/util/scheduler_helper.go (PrioritizeHyperNodes,
SelectBestHyperNode).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Callable, Iterable

import numpy as np

from reference_scheduler.scheduler.api import (
    hyper_node_info,
    job_info,
    node_info,
    queue_info,
)
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)
# allocate's task placement: (session, tasks, job, queue, allowed nodes, HyperNode) ->
# (statement, HyperNode the placed tasks sit under).
PlaceTasks = Callable[[Session, list[job_info.TaskInfo], job_info.JobInfo, queue_info.QueueInfo, np.ndarray | None, str], tuple[Statement, str]]


@dataclasses.dataclass(frozen=True)
class Trial:
    """What placing the job inside one HyperNode gave: the placements, undone until chosen, and
    the tasks it left for later (a job that became ready before all its tasks were placed)."""

    placements: tuple[tuple[str, job_info.TaskInfo, node_info.NodeInfo], ...]
    left: list[job_info.TaskInfo]


def allowed_rows(ssn: Session, name: str) -> np.ndarray:
    """One bool per matrix row: the HyperNode's nodes."""
    allowed = np.zeros(len(ssn.matrix), dtype=bool)
    rows = [ssn.matrix.index[n] for n in ssn.hyper_nodes_info.nodes(name) if n in ssn.matrix.index]
    allowed[rows] = True
    return allowed


def replay(stmt: Statement, placements: Iterable[tuple[str, job_info.TaskInfo, node_info.NodeInfo]]) -> None:
    """Apply a trial's placements, noted and undone earlier, to the statement to commit."""
    for kind, task, node in placements:
        if kind == "allocate":
            stmt.allocate(task, node)
        else:
            stmt.pipeline(task, node)


class HyperNodeSearch:
    def __init__(self, place_tasks: PlaceTasks) -> None:
        self.place_tasks = place_tasks
        # Per job, per HyperNode tried this cycle: the sum of the scores of the nodes chosen.
        self.scores: dict[str, dict[str, float]] = {}

    def add_score(self, job: job_info.JobInfo, hypernode: str, score: float) -> None:
        by_hypernode = self.scores.setdefault(job.uid, {})
        by_hypernode[hypernode] = by_hypernode.get(hypernode, 0.0) + score

    def allocate(self, ssn: Session, tasks: list[job_info.TaskInfo], job: job_info.JobInfo, queue: queue_info.QueueInfo, highest_tier: int) -> tuple[Statement | None, list[job_info.TaskInfo]]:
        """The statement placing the job in its best HyperNode (None when no HyperNode within
        highestTierAllowed holds it; job.fit_errors then say why the last one tried did not), and
        the tasks left for later. `tasks` itself is not changed."""
        tree = ssn.hyper_nodes_info
        recorded = hyper_node_info.allocated_hypernode(job)
        trials: dict[str, Trial] = {}
        joined: dict[str, str] = {}
        for tier in tree.tiers:
            if tier > highest_tier or trials:
                break
            for name in tree.by_tier[tier]:
                joined[name] = name
                if recorded:
                    # The job keeps growing under what it has: the two together may not span a
                    # tier above the highest allowed.
                    common = tree.lca(name, recorded)
                    if common not in tree or tree.tier(common) > highest_tier:
                        continue
                    joined[name] = common
                trial = self._try(ssn, list(tasks), job, queue, name)
                if trial is not None:
                    trials[name] = trial
        if not trials:
            log.debug("job %s fits in no HyperNode up to tier %d", job.uid, highest_tier)
            return None, []
        best = self._best(ssn, job, trials)
        stmt = Statement(ssn)
        replay(stmt, trials[best].placements)
        if joined[best] != recorded:
            hyper_node_info.set_allocated_hypernode(job, joined[best])
        log.debug("job %s placed in HyperNode %s (recorded: %s)", job.uid, best, joined[best])
        return stmt, trials[best].left

    def _try(self, ssn: Session, tasks: list[job_info.TaskInfo], job: job_info.JobInfo, queue: queue_info.QueueInfo, name: str) -> Trial | None:
        # Each trial starts clean: earlier trials' fit errors must not skip this one's tasks.
        job.fit_errors.clear()
        job.job_fit_error = ""
        stmt, _ = self.place_tasks(ssn, tasks, job, queue, allowed_rows(ssn, name), name)
        ready = session_plugins.job_ready(ssn, job)
        placements = tuple((op.kind, op.task, op.node) for op in stmt.operations)
        stmt.discard()
        if not ready or not placements:
            return None
        return Trial(placements, tasks)

    def _best(self, ssn: Session, job: job_info.JobInfo, trials: dict[str, Trial]) -> str:
        names = sorted(trials)
        if len(names) == 1:
            return names[0]
        candidates = {name: sorted(ssn.hyper_nodes_info.nodes(name)) for name in names}
        plugin_scores = session_plugins.hyper_node_scores(ssn, job, candidates)
        node_scores = self.scores.get(job.uid, {})
        totals = {name: plugin_scores[name] + node_scores.get(name, 0.0) for name in names}
        log.debug("job %s: HyperNode scores %s", job.uid, totals)
        return max(names, key=lambda name: totals[name])
