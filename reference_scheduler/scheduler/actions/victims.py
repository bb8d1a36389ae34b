"""What preempt and reclaim share: the nodes a task could use if others left, whether a set of
victims frees enough, and the order victims are taken in.

Upstream: pkg/scheduler/util/scheduler_helper.go (ValidateVictims), framework/session.go
(BuildVictimsPriorityQueue).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable

from reference_scheduler.scheduler.api import job_info, node_info, queue_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session


@dataclasses.dataclass
class Claimants:
    """The jobs that may take resources from others this cycle."""

    # The queue of every admitted, valid job.
    queues: dict[str, queue_info.QueueInfo]
    # Starving jobs, by queue.
    starving: dict[str, list[job_info.JobInfo]]
    # Their pending tasks in task order, by job uid.
    pending_tasks: dict[str, list[job_info.TaskInfo]]


def claimants(ssn: Session, task_key: Callable[[job_info.TaskInfo], Any]) -> Claimants:
    """A PodGroup still Pending has not been admitted and may not take from others; nor may an
    invalid job or one whose queue is unknown."""
    found = Claimants({}, {}, {})
    for job in ssn.jobs.values():
        if job.is_pending() or session_plugins.job_valid(ssn, job) is not None or job.queue not in ssn.queues:
            continue
        found.queues[job.queue] = ssn.queues[job.queue]
        if session_plugins.job_starving(ssn, job):
            found.starving.setdefault(job.queue, []).append(job)
            found.pending_tasks[job.uid] = sorted(job.by_status(job_info.TaskStatus.PENDING), key=task_key)
    return found


def candidate_nodes(ssn: Session, task: job_info.TaskInfo) -> list[node_info.NodeInfo]:
    """Nodes passing every predicate except free resources, best score first, then by name."""
    rows = session_plugins.predicate_nodes(ssn, task).passed_rows()
    scores = session_plugins.node_scores(ssn, task, rows)
    nodes = ssn.node_list()
    # Rows are in name order and the sort is stable: equal scores keep name order.
    order = sorted(range(len(rows)), key=lambda k: -scores[k])
    return [nodes[int(rows[k])] for k in order]


def enough(task: job_info.TaskInfo, node: node_info.NodeInfo, victims: list[job_info.TaskInfo]) -> bool:
    """Would the task fit once all these victims are gone? Upstream: ValidateVictims."""
    if not victims:
        return False
    free = node.future_idle()
    for victim in victims:
        free.add(victim.resreq)
    return task.resreq.less_equal(free)


def in_eviction_order(ssn: Session, evictor: job_info.TaskInfo, victims: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    """The victim that matters least first: inside one job the reverse of task order, across
    jobs the reverse of job order."""
    task_cmp = session_plugins.task_order_key(ssn)
    job_cmp = session_plugins.job_order_key(ssn)

    def compare(left: job_info.TaskInfo, right: job_info.TaskInfo) -> int:
        if left.job == right.job:
            return -task_cmp(left, right)
        return -job_cmp(ssn.jobs[left.job], ssn.jobs[right.job])

    return sorted(victims, key=functools.cmp_to_key(compare))
