"""allocate: place pending tasks queue by queue and job by job; a job's placements are committed
only once the job is ready (its gang is complete), otherwise discarded.

A job whose PodGroup asks for a hard network topology is placed whole inside one HyperNode: the
HyperNodes of the lowest tier are tried first, one tier up at a time and never above the job's
highestTierAllowed; of those in the first tier where the job fits, the best scored is kept
(hypernode_search.py). A job with a soft topology is placed over all nodes; the
network-topology-aware plugin's node scores keep its tasks together. Either way the HyperNode the
job's tasks sit under is recorded on its PodGroup. A job whose PodGroup has a subGroupPolicy (a
Volcano Job's partitions, v1.14) is placed sub-job by sub-job (sub_job_search.py).

Upstream: pkg/scheduler/actions/allocate/allocate.go.
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from reference_scheduler.scheduler.actions import hypernode_search, sub_job_search
from reference_scheduler.scheduler.api import (
    hyper_node_info,
    job_info,
    node_info,
    queue_info,
)
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement
from reference_scheduler.scheduler.util import priority_queue

log = logging.getLogger(__name__)
NAME = "allocate"


def place_scored(ssn: Session, task: job_info.TaskInfo, job: job_info.JobInfo, allowed: np.ndarray | None = None) -> tuple[node_info.NodeInfo | None, float]:
    """The best node for the task and its score, or None with why each node was refused in
    job.fit_errors.

    The action's own check comes first: the request fits what the node will have free once its
    releasing pods are gone (the task is pipelined there if it does not fit yet); then every
    predicate; then the highest score, ties going to the first node by name so runs repeat.
    All of it over every node at once (api/node_matrix.py). `allowed` (one bool per node) keeps
    only a HyperNode's nodes; the fit errors then name only those, as upstream's do. The score
    is the chosen node's when several nodes passed and 0 when one did (upstream does not score
    a lone candidate)."""
    matrix = ssn.matrix
    request = ssn.request(task)
    free = matrix.future_idle()
    passed = request.fits(free)
    verdict = session_plugins.predicate_nodes(ssn, task)
    passed &= ~verdict.failed
    if allowed is not None:
        passed &= allowed
    rows = np.flatnonzero(passed)
    if not len(rows):
        lacking = request.insufficient(matrix, free)
        considered = range(len(matrix)) if allowed is None else np.flatnonzero(allowed)
        job.fit_errors[task.uid] = {matrix.names[i]: lacking[i] or str(verdict.reason[i]) for i in considered}
        return None, 0.0
    scores = session_plugins.node_scores(ssn, task, rows)
    best = int(np.argmax(scores))
    return ssn.node_list()[int(rows[best])], float(scores[best]) if len(rows) > 1 else 0.0


def place(ssn: Session, task: job_info.TaskInfo, job: job_info.JobInfo) -> node_info.NodeInfo | None:
    """The best node of all for the task (see place_scored)."""
    return place_scored(ssn, task, job)[0]


def _role_failed(job: job_info.JobInfo, task: job_info.TaskInfo) -> bool:
    if not task.role:
        return False
    return any(job.tasks[uid].role == task.role for uid in job.fit_errors if uid in job.tasks)


def _need_continue(job: job_info.JobInfo) -> bool:
    """Upstream: JobInfo.NeedContinueAllocating."""
    if job.min_available == len(job.tasks):
        return False
    failed_roles = {job.tasks[uid].role for uid in job.fit_errors if uid in job.tasks}
    pending: dict[str, int] = {}
    for task in job.by_status(job_info.TaskStatus.PENDING):
        pending[task.role] = pending.get(task.role, 0) + 1
    if job.min_available < job.task_min_available_total():
        left = sum(n for role, n in pending.items() if role not in failed_roles)
        return job.ready_task_num() + left >= job.min_available
    allocated: dict[str, int] = {}
    for task in job.tasks.values():
        if task.status in job_info.READY:
            allocated[task.role] = allocated.get(task.role, 0) + 1
    return all(allocated.get(role, 0) >= job.min_task_member.get(role, 0) for role in failed_roles)


def new_allocated_hypernode(ssn: Session, node: str, current: str) -> str:
    """The HyperNode a job's tasks sit under once one more lands on `node`: the lowest-tier
    HyperNode of the node, joined with what the job had by their least common ancestor.
    Upstream: getJobNewAllocatedHyperNode."""
    tree = ssn.hyper_nodes_info
    mine = tree.hypernode_of_node(node)
    if not mine:
        return current
    return tree.lca(mine, current) if current else mine


class Allocate:
    NAME = NAME

    def __init__(self) -> None:
        self.search = hypernode_search.HyperNodeSearch(self.place_tasks)
        self.sub_jobs = sub_job_search.SubJobSearch(place_scored)

    def execute(self, ssn: Session) -> None:
        enqueue_on = "enqueue" in ssn.conf.actions
        by_queue: dict[str, priority_queue.PriorityQueue[job_info.JobInfo]] = {}
        job_order = session_plugins.job_order_key(ssn)
        for job in ssn.jobs.values():
            if job.is_pending():
                if enqueue_on:
                    continue
                job.phase = "Inqueue"  # no enqueue action: nothing else would let it out of Pending
            if session_plugins.job_valid(ssn, job) is not None:
                continue
            if job.queue not in ssn.queues:
                continue
            by_queue.setdefault(job.queue, priority_queue.PriorityQueue(job_order)).push(job)
        queue_cmp = functools.cmp_to_key(session_plugins.queue_order_key(ssn))
        task_cmp = functools.cmp_to_key(session_plugins.task_order_key(ssn))
        pending: dict[str, list[job_info.TaskInfo]] = {}
        active = set(by_queue)
        while active:
            queue = min((ssn.queues[q] for q in active), key=queue_cmp)
            jobs = by_queue[queue.name]
            if session_plugins.overused(ssn, queue) or not jobs:
                active.discard(queue.name)
                continue
            job = jobs.pop()
            if job.uid not in pending:
                # Gated pods wait for their gates; best-effort ones are backfill's.
                tasks = [t for t in job.by_status(job_info.TaskStatus.PENDING) if not t.best_effort and not t.sch_gated]
                pending[job.uid] = sorted(tasks, key=task_cmp)
            tasks = pending[job.uid]
            if not tasks:
                continue
            topology = hyper_node_info.resolved_topology(job, lambda: ssn.hyper_nodes_info)
            if sub_job_search.applies(job):
                # Partitions (a PodGroup's subGroupPolicy): placed sub-job by sub-job; those with a
                # topology wait while the HyperNode tree is inconsistent, as hard jobs do.
                if not ssn.hyper_nodes_info.ready and sub_job_search.has_topology(job):
                    log.error("HyperNodes are not ready (%s); job %s with sub-groups waits", "; ".join(ssn.hyper_nodes_info.problems), job.uid)
                    active.discard(queue.name)
                    continue
                stmt = self.sub_jobs.allocate(ssn, job, queue)
                if stmt is not None and stmt.operations:
                    stmt.commit()
                    # Ready with tasks left (more partitions than minSubGroups needs): again.
                    if any(t.status is job_info.TaskStatus.PENDING and not t.best_effort and not t.sch_gated for t in job.tasks.values()):
                        jobs.push(job)
                continue
            if topology is not None and topology.hard:
                if not ssn.hyper_nodes_info.ready:
                    # Upstream skips the job and, as it does not put the queue back, the rest of
                    # the queue for this cycle.
                    log.error("HyperNodes are not ready (%s); job %s with a hard network topology waits", "; ".join(ssn.hyper_nodes_info.problems), job.uid)
                    active.discard(queue.name)
                    continue
                stmt, left = self.search.allocate(ssn, tasks, job, queue, topology.highest_tier_allowed)
                if left:
                    jobs.push(job)
                    pending[job.uid] = left
            else:
                stmt = self._allocate_tasks(ssn, tasks, job, queue)
                if tasks:
                    jobs.push(job)
            if stmt is not None:
                stmt.commit()

    def _allocate_tasks(self, ssn: Session, tasks: list[job_info.TaskInfo], job: job_info.JobInfo, queue: queue_info.QueueInfo) -> Statement | None:
        """Place tasks over all nodes; the statement when the job is ready, else None (undone
        unless the job is pipelined). A soft-topology job gets its HyperNode recorded."""
        stmt, hypernode = self.place_tasks(ssn, tasks, job, queue, None, "")
        if session_plugins.job_ready(ssn, job):
            topology = hyper_node_info.network_topology(job)
            if topology is not None and topology.soft and hypernode != hyper_node_info.allocated_hypernode(job):
                hyper_node_info.set_allocated_hypernode(job, hypernode)
            return stmt
        if not session_plugins.job_pipelined(ssn, job):
            stmt.discard()
        return None

    def place_tasks(self, ssn: Session, tasks: list[job_info.TaskInfo], job: job_info.JobInfo, queue: queue_info.QueueInfo, allowed: np.ndarray | None, hypernode: str) -> tuple[Statement, str]:
        """Place tasks from the front of `tasks` (those taken are removed) on the allowed nodes
        until the job is ready, and say under which HyperNode they now sit. `hypernode`, when
        the nodes are one HyperNode's, collects the chosen nodes' scores for ranking it.
        Upstream: Action.allocateResourcesForTasks."""
        stmt = Statement(ssn)
        constrained = hyper_node_info.network_topology(job) is not None
        current = hyper_node_info.allocated_hypernode(job)
        while tasks:
            task = tasks.pop(0)
            if not session_plugins.allocatable(ssn, queue, task):
                log.debug("queue %s cannot take task %s now", queue.name, task.name)
                continue
            if _role_failed(job, task):
                continue
            if constrained:
                task.job_allocated_hypernode = current
            node, score = place_scored(ssn, task, job, allowed)
            if node is None:
                if _need_continue(job):
                    continue
                break
            if hypernode:
                self.search.add_score(job, hypernode, score)
            if task.resreq.less_equal(node.idle):
                stmt.allocate(task, node)
            else:
                stmt.pipeline(task, node)
            if constrained:
                current = new_allocated_hypernode(ssn, node.name, current)
            if session_plugins.job_ready(ssn, job) and tasks:
                break
        return stmt, current
