"""allocate: place pending tasks queue by queue and job by job; a job's placements are committed
only once the job is ready (its gang is complete), otherwise discarded.

Upstream: pkg/scheduler/actions/allocate/allocate.go.
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from reference_scheduler.scheduler.api import job_info, node_info, queue_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement
from reference_scheduler.scheduler.util import priority_queue

log = logging.getLogger(__name__)
NAME = "allocate"


def place(ssn: Session, task: job_info.TaskInfo, job: job_info.JobInfo) -> node_info.NodeInfo | None:
    """The best node for the task, or None with why each node was refused in job.fit_errors.

    The action's own check comes first: the request fits what the node will have free once its
    releasing pods are gone (the task is pipelined there if it does not fit yet); then every
    predicate; then the highest score, ties going to the first node by name so runs repeat.
    All of it over every node at once (api/node_matrix.py)."""
    matrix = ssn.matrix
    request = ssn.request(task)
    free = matrix.future_idle()
    fits = request.fits(free)
    verdict = session_plugins.predicate_nodes(ssn, task)
    rows = np.flatnonzero(fits & ~verdict.failed)
    if not len(rows):
        lacking = request.insufficient(matrix, free)
        job.fit_errors[task.uid] = {name: lacking[i] or str(verdict.reason[i]) for i, name in enumerate(matrix.names)}
        return None
    scores = session_plugins.node_scores(ssn, task, rows)
    return ssn.node_list()[int(rows[int(np.argmax(scores))])]


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


class Allocate:
    NAME = NAME

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
                tasks = [t for t in job.by_status(job_info.TaskStatus.PENDING) if not t.best_effort]
                pending[job.uid] = sorted(tasks, key=task_cmp)
            tasks = pending[job.uid]
            if not tasks:
                continue
            stmt = self._allocate_tasks(ssn, tasks, job, queue)
            if tasks:
                jobs.push(job)
            if stmt is not None:
                stmt.commit()

    def _allocate_tasks(self, ssn: Session, tasks: list[job_info.TaskInfo], job: job_info.JobInfo, queue: queue_info.QueueInfo) -> Statement | None:
        stmt = Statement(ssn)
        while tasks:
            task = tasks.pop(0)
            if not session_plugins.allocatable(ssn, queue, task):
                log.debug("queue %s cannot take task %s now", queue.name, task.name)
                continue
            if _role_failed(job, task):
                continue
            node = place(ssn, task, job)
            if node is None:
                if _need_continue(job):
                    continue
                break
            if task.resreq.less_equal(node.idle):
                stmt.allocate(task, node)
            else:
                stmt.pipeline(task, node)
            if session_plugins.job_ready(ssn, job) and tasks:
                break
        if session_plugins.job_ready(ssn, job):
            return stmt
        if not session_plugins.job_pipelined(ssn, job):
            stmt.discard()
        return None
