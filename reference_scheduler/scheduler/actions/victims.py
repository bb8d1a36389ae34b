"""What preempt and reclaim share: the nodes a task could use if others left, whether a set of
victims frees enough, and the order victims are taken in.

Upstream: pkg/scheduler/util/scheduler_helper.go (ValidateVictims), framework/session_plugins.go
(BuildVictimsPriorityQueue, VictimQueueOrderFn).
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
            # A gated pod may not take room from others before its gates are gone.
            found.pending_tasks[job.uid] = sorted((t for t in job.by_status(job_info.TaskStatus.PENDING) if not t.sch_gated), key=task_key)
    return found


def candidate_nodes(ssn: Session, task: job_info.TaskInfo) -> list[node_info.NodeInfo]:
    """Nodes where evicting pods could make room: none of their predicate failures is beyond
    what eviction mends (free resources are judged with the victims), best score first, then by
    name. Upstream: PredicateForPreemptAction, FilterOutUnschedulableAndUnresolvableNodesForTask."""
    rows = session_plugins.predicate_nodes(ssn, task).preemptable_rows()
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
    """The victim that matters least first: inside one job the reverse of task order; across jobs
    of different queues the victim queue order (capacity's hierarchy: the queue nearest the
    evictor's in the tree first), else the reverse of job order."""
    task_cmp = session_plugins.task_order_key(ssn)
    job_cmp = session_plugins.job_order_key(ssn)
    evictor_job = ssn.jobs.get(evictor.job)

    def compare(left: job_info.TaskInfo, right: job_info.TaskInfo) -> int:
        if left.job == right.job:
            return -task_cmp(left, right)
        left_job, right_job = ssn.jobs[left.job], ssn.jobs[right.job]
        queues = (ssn.queues.get(left_job.queue), ssn.queues.get(right_job.queue), ssn.queues.get(evictor_job.queue) if evictor_job else None)
        if left_job.queue != right_job.queue and all(q is not None for q in queues):
            return session_plugins.victim_queue_first(ssn, *queues)  # type: ignore[arg-type]
        return -job_cmp(left_job, right_job)

    return sorted(victims, key=functools.cmp_to_key(compare))
