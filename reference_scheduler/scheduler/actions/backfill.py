"""backfill: place the best-effort tasks (pods that request nothing) that allocate leaves alone.

Only jobs past Pending and valid take part; their queues are taken in queue order (each drained
before the next), jobs in job order, tasks in task order. Each task goes to the best node the
predicates and scores give. A placement is bound only once the job is ready, as a session's own
Allocate does: a best-effort member of a gang that cannot be completed stays unbound with the rest
of its gang; when a placement makes the job ready, the job's earlier backfilled placements of the
session are bound with it. Pods with requests are never backfilled (upstream's "backfill for other
case" is still a TODO at v1.13).

Upstream: pkg/scheduler/actions/backfill/backfill.go; Session.Allocate in
pkg/scheduler/framework/session.go.
"""

from __future__ import annotations

import functools
import logging

from reference_scheduler.scheduler.actions import allocate
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)
NAME = "backfill"


def _candidates(ssn: Session, job: job_info.JobInfo) -> list[job_info.TaskInfo]:
    """The job's best-effort tasks still to place. One pipelined in this session (onto resources
    being released) is taken back and placed again, as upstream un-pipelines it."""
    tasks = [t for t in job.by_status(job_info.TaskStatus.PENDING) if t.best_effort and not t.sch_gated]
    for task in job.by_status(job_info.TaskStatus.PIPELINED):
        if task.best_effort:
            Statement(ssn).unpipeline(task)
            tasks.append(task)
    return tasks


def ordered_tasks(ssn: Session) -> list[tuple[job_info.JobInfo, job_info.TaskInfo]]:
    """Every task to backfill, queue by queue, job by job, task by task."""
    by_queue: dict[str, list[job_info.JobInfo]] = {}
    tasks: dict[str, list[job_info.TaskInfo]] = {}
    for job in ssn.jobs.values():
        if job.is_pending() or job.queue not in ssn.queues:
            continue
        if session_plugins.job_valid(ssn, job) is not None:
            continue
        found = _candidates(ssn, job)
        if found:
            tasks[job.uid] = found
            by_queue.setdefault(job.queue, []).append(job)
    queue_key = functools.cmp_to_key(session_plugins.queue_order_key(ssn))
    job_key = functools.cmp_to_key(session_plugins.job_order_key(ssn))
    task_key = functools.cmp_to_key(session_plugins.task_order_key(ssn))
    ordered: list[tuple[job_info.JobInfo, job_info.TaskInfo]] = []
    for queue in sorted((ssn.queues[name] for name in by_queue), key=queue_key):
        for job in sorted(by_queue[queue.name], key=job_key):
            ordered.extend((job, task) for task in sorted(tasks[job.uid], key=task_key))
    return ordered


class Backfill:
    NAME = NAME

    def execute(self, ssn: Session) -> None:
        waiting: dict[str, Statement] = {}
        for job, task in ordered_tasks(ssn):
            node = allocate.place(ssn, task, job)
            if node is None:
                continue
            stmt = waiting.setdefault(job.uid, Statement(ssn))
            stmt.allocate(task, node)
            if session_plugins.job_ready(ssn, job):
                stmt.commit()
            else:
                log.debug("backfill: %s placed on %s, bound once job %s is ready", task.name, node.name, job.uid)
