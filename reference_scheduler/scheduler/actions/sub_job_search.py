"""allocate's path for a job whose PodGroup has a subGroupPolicy (v1.14): a Volcano Job whose tasks
are cut into partitions, each placed as one group inside its own HyperNode.

The job is tried in each HyperNode its own topology allows, lowest tier first (in every node when
it has none); in each, its sub-jobs are placed one after the other (those its minSubGroups still
needs first, then by partition number) until the job is ready (checked after each). A sub-job with a hard topology is
tried in each HyperNode inside the job's, lowest tier first up to its highestTierAllowed, and goes
to the one network-topology-aware scores highest (HyperNode binpack); the job's HyperNode is the
one whose sub-jobs scored highest in sum. Every trial is undone; only the chosen one is replayed
into the statement allocate commits.

As from v1.14.3/v1.15.0 upstream, a soft topology is searched as a hard one whose highest tier is
above every HyperNode (a virtual root holding every node): lowest HyperNode first, the whole
cluster last; a soft sub-job takes the job's highest tier when the job has one. As from v1.14,
the search needs the network-topology-aware plugin: without it the job and its sub-jobs are
placed over all nodes.

A job or sub-job already placed in part grows only inside the highest HyperNode above what it
holds that is still within its highest tier, so a lost pod comes back beside its partition. The
kit derives what a job holds from its pods' nodes every cycle (upstream keeps it in memory and
recovers it the same way after a restart).

Kit choices where upstream leaves it to chance: HyperNodes are tried in name order and a tie goes
to the first by name (upstream: map order and a random pick); a trial counts only when it makes
the job ready (upstream also keeps a pipelined one).

Upstream: pkg/scheduler/actions/allocate/allocate.go (allocateForJob, allocateForSubJob,
organizeJobWorksheet), pkg/scheduler/plugins/network-topology-aware (hyperNodeGradientFn,
getSearchRoot), pkg/scheduler/framework/session.go (adjustNetworkTopologySpec).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import Callable, Iterable

import numpy as np

from reference_scheduler.scheduler.actions import hypernode_search
from reference_scheduler.scheduler.api import (
    hyper_node_info,
    job_info,
    node_info,
    queue_info,
    sub_job_info,
)
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)
# Every node: the virtual HyperNode above all others.
ROOT = ""
# allocate's node choice: (session, task, job, allowed rows) -> (node or None, score).
PlaceScored = Callable[[Session, job_info.TaskInfo, job_info.JobInfo, "np.ndarray | None"], "tuple[node_info.NodeInfo | None, float]"]
Placements = tuple[tuple[str, job_info.TaskInfo, node_info.NodeInfo], ...]


@dataclasses.dataclass(frozen=True)
class Trial:
    placements: Placements
    score: float


def applies(job: job_info.JobInfo) -> bool:
    return sub_job_info.has_policies(job)


def has_topology(job: job_info.JobInfo) -> bool:
    """The job or one of its sub-group policies names a network topology."""
    return hyper_node_info.network_topology(job) is not None or any(rule.topology is not None for rule in sub_job_info.policies(job))


def _taken(stmt: Statement) -> Placements:
    return tuple((op.kind, op.task, op.node) for op in stmt.operations)


class SubJobSearch:
    def __init__(self, place_scored: PlaceScored) -> None:
        self.place_scored = place_scored

    def allocate(self, ssn: Session, job: job_info.JobInfo, queue: queue_info.QueueInfo) -> Statement | None:
        """The statement placing the job in its best HyperNode, None when none makes it ready."""
        tree = ssn.hyper_nodes_info
        confined = session_plugins.sub_jobs_confined(ssn)
        highest = self._highest_tier(tree, hyper_node_info.network_topology(job), None)
        if not confined or highest is None:
            gradients = [[ROOT]]
        else:
            gradients = self._gradients(tree, highest, ROOT, self._placed(tree, job.tasks.values()))
        for gradient in gradients:
            trials = {}
            for hypernode in gradient:
                trial = self._try_job(ssn, job, queue, hypernode, confined, highest)
                if trial is not None:
                    trials[hypernode] = trial
            if trials:
                best = max(sorted(trials), key=lambda name: trials[name].score)
                log.debug("job %s: sub-jobs placed under %s (scores %s)", job.uid, best or "every node", {k: v.score for k, v in trials.items()})
                stmt = Statement(ssn)
                hypernode_search.replay(stmt, trials[best].placements)
                return stmt
        log.debug("job %s: no HyperNode holds its sub-jobs (%s)", job.uid, sub_job_info.describe(job))
        return None

    # --- where to look -----------------------------------------------------------------------

    @staticmethod
    def _root_tier(tree: hyper_node_info.HyperNodesInfo) -> int:
        return (tree.tiers[-1] + 1) if tree.tiers else 1

    def _highest_tier(self, tree: hyper_node_info.HyperNodesInfo, topology: hyper_node_info.NetworkTopology | None, job_tier: int | None) -> int | None:
        """The highest tier a topology may span, None when it confines nothing. A soft one spans
        anything: the job's highest tier for a sub-job of a job that has one, else the virtual
        root's."""
        if topology is None:
            return None
        topology = tree.resolve(topology)
        if topology.soft:
            return job_tier if job_tier is not None else self._root_tier(tree)
        if not topology.hard:
            return None
        return topology.highest_tier_allowed

    def _placed(self, tree: hyper_node_info.HyperNodesInfo, tasks: Iterable[job_info.TaskInfo]) -> str:
        """The lowest HyperNode holding every placed task, '' when none is placed (or no
        HyperNode holds them all: then the virtual root does)."""
        placed = ""
        for task in tasks:
            if not task.node_name or task.status not in job_info.ALLOCATED | {job_info.TaskStatus.PIPELINED}:
                continue
            mine = tree.hypernode_of_node(task.node_name)
            placed = mine if not placed else tree.lca(placed, mine)
        return placed

    def _gradients(self, tree: hyper_node_info.HyperNodesInfo, highest: int, within: str, placed: str) -> list[list[str]]:
        """The HyperNodes to try, tier by tier from the lowest, inside `within` (ROOT: anywhere),
        never above `highest`, and, for what is placed in part, inside the highest HyperNode above
        it that is within `highest`. Upstream: hyperNodeGradientFn, getSearchRoot."""
        root_tier = self._root_tier(tree)
        anchor = within
        if placed and placed in tree and highest < root_tier:
            above = [name for name in tree.ancestors(placed) if tree.tier(name) <= highest]
            if not above:
                return []
            top = above[-1]
            if not within or tree.within(top, within):
                anchor = top
            elif not tree.within(within, top):
                return []
        gradients = []
        for tier in tree.tiers:
            if tier > highest:
                break
            names = [name for name in tree.by_tier[tier] if not anchor or tree.within(name, anchor)]
            if names:
                gradients.append(names)
        if highest >= root_tier and not anchor:
            gradients.append([ROOT])
        return gradients

    def _rows(self, ssn: Session, hypernode: str) -> np.ndarray | None:
        return None if hypernode == ROOT else hypernode_search.allowed_rows(ssn, hypernode)

    def _nodes(self, ssn: Session, hypernode: str) -> frozenset[str]:
        return frozenset(ssn.nodes) if hypernode == ROOT else ssn.hyper_nodes_info.nodes(hypernode)

    # --- trials ------------------------------------------------------------------------------

    def _try_job(self, ssn: Session, job: job_info.JobInfo, queue: queue_info.QueueInfo, hypernode: str, confined: bool, job_tier: int | None) -> Trial | None:
        """The job's sub-jobs placed inside one HyperNode until it is ready; undone."""
        job.fit_errors.clear()
        job.job_fit_error = ""
        stmt = Statement(ssn)
        score = 0.0
        work = sub_job_info.worksheet(job)
        while work:
            sub = work.pop(0)
            trial = self._try_sub_job(ssn, job, queue, sub, hypernode, confined, job_tier)
            if trial is None:
                continue
            hypernode_search.replay(stmt, trial.placements)
            score += trial.score
            if sub.pending():
                work.append(sub)
            # Judged after each sub-job placed, so a job already ready (running, with partitions
            # beyond its minSubGroups left) still gets one more.
            if session_plugins.job_ready(ssn, job):
                break
        ready = session_plugins.job_ready(ssn, job)
        placements = _taken(stmt)
        stmt.discard()
        if not ready or not placements:
            return None
        return Trial(placements, score)

    def _try_sub_job(self, ssn: Session, job: job_info.JobInfo, queue: queue_info.QueueInfo, sub: sub_job_info.SubJob, within: str, confined: bool, job_tier: int | None) -> Trial | None:
        """The sub-job placed in its best HyperNode inside `within`; undone."""
        tree = ssn.hyper_nodes_info
        highest = self._highest_tier(tree, sub.topology, job_tier) if confined else None
        gradients = [[within]] if highest is None else self._gradients(tree, highest, within, self._placed(tree, sub.tasks))
        for gradient in gradients:
            found: dict[str, Placements] = {}
            for hypernode in gradient:
                placements = self._place(ssn, job, queue, sub, hypernode)
                if placements:
                    found[hypernode] = placements
            if not found:
                continue
            scores = session_plugins.sub_job_hyper_node_scores(ssn, sub, {name: self._nodes(ssn, name) for name in found}) or {}
            best = max(sorted(found), key=lambda name: scores.get(name, 0.0))
            return Trial(found[best], scores.get(best, 0.0))
        return None

    def _place(self, ssn: Session, job: job_info.JobInfo, queue: queue_info.QueueInfo, sub: sub_job_info.SubJob, hypernode: str) -> Placements:
        """The sub-job's pending tasks placed on the HyperNode's nodes until it is ready (or can
        run once pipelined tasks land); nothing when it cannot be. Undone.
        Upstream: allocateResourcesForTasks."""
        tree = ssn.hyper_nodes_info
        allowed = self._rows(ssn, hypernode)
        stmt = Statement(ssn)
        current = self._placed(tree, sub.tasks)
        order = functools.cmp_to_key(session_plugins.task_order_key(ssn))
        for task in sorted(sub.pending(), key=order):
            if not session_plugins.allocatable(ssn, queue, task):
                continue
            if sub.topology is not None:
                task.job_allocated_hypernode = current
            node, _ = self.place_scored(ssn, task, job, allowed)
            if node is None:
                break
            if task.resreq.less_equal(node.idle):
                stmt.allocate(task, node)
            else:
                stmt.pipeline(task, node)
            mine = tree.hypernode_of_node(node.name)
            current = (tree.lca(current, mine) if current else mine) if mine else current
            if sub.is_ready():
                break
        waiting = sum(1 for t in sub.tasks if t.status is job_info.TaskStatus.PIPELINED)
        runnable = sub.is_ready() or sub.ready_num() + waiting >= sub.min_available
        placements = _taken(stmt)
        stmt.discard()
        return placements if runnable else ()
