"""preempt: a starving job takes room from lower-priority work of its own queue: first from other
jobs, then from lower-priority tasks of its own job. Victims are evicted only when the preemptor
then fits (its statement is committed once the job is pipelined), and never from another queue.
Gated pods (spec.schedulingGates) do not preempt.

Normal preemption evicts, on the first candidate node where the agreed victims free enough, until
the preemptor's request fits; with the action's argument `enableTopologyAwarePreemption: true`
victims are chosen so that every predicate passes too (preempt_topology.py).

Upstream: pkg/scheduler/actions/preempt/preempt.go.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable

from reference_scheduler.scheduler.actions import preempt_topology
from reference_scheduler.scheduler.actions import victims as victims_mod
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)
NAME = "preempt"
Filter = Callable[[job_info.TaskInfo], bool]


def _eligible_victim(preemptor: job_info.TaskInfo, task: job_info.TaskInfo) -> bool:
    if task.status not in job_info.PREEMPTABLE or not task.preemptable:
        return False
    # A best-effort task may only push out other best-effort tasks.
    return not (preemptor.best_effort and not task.best_effort)


def preempt(ssn: Session, stmt: Statement, preemptor: job_info.TaskInfo, allowed: Filter) -> bool:
    """Find a node where evicting allowed victims makes room; evict them and pipeline the
    preemptor there. True when the preemptor got a node."""
    if preemptor.preempts_never:
        return False
    if preempt_topology.enabled(ssn, NAME):
        return preempt_topology.preempt(ssn, stmt, preemptor, lambda t: _eligible_victim(preemptor, t) and allowed(t), NAME)
    job = ssn.jobs[preemptor.job]
    queue = ssn.queues[job.queue]
    for node in victims_mod.candidate_nodes(ssn, preemptor):
        candidates = [t for t in node.tasks.values() if t.job in ssn.jobs and _eligible_victim(preemptor, t) and allowed(t)]
        chosen = session_plugins.preemptable(ssn, preemptor, candidates)
        if not victims_mod.enough(preemptor, node, chosen):
            continue
        for victim in victims_mod.in_eviction_order(ssn, preemptor, chosen):
            if session_plugins.allocatable(ssn, queue, preemptor) and preemptor.resreq.less_equal(node.future_idle()):
                break
            log.debug("preempt: evicting %s/%s for %s/%s on %s", victim.namespace, victim.name, preemptor.namespace, preemptor.name, node.name)
            stmt.evict(victim, NAME)
        if session_plugins.allocatable(ssn, queue, preemptor) and preemptor.resreq.less_equal(node.future_idle()):
            stmt.pipeline(preemptor, node)
            return True
    return False


class Preempt:
    NAME = NAME

    def execute(self, ssn: Session) -> None:
        job_cmp = functools.cmp_to_key(session_plugins.job_order_key(ssn))
        task_cmp = functools.cmp_to_key(session_plugins.task_order_key(ssn))
        queue_cmp = functools.cmp_to_key(session_plugins.queue_order_key(ssn))
        found = victims_mod.claimants(ssn, task_cmp)
        preemptors, pending_tasks = found.starving, found.pending_tasks
        under_request = {queue: list(jobs) for queue, jobs in preemptors.items()}
        for queue in sorted((ssn.queues[q] for q in preemptors), key=queue_cmp):
            self._between_jobs(ssn, preemptors[queue.name], pending_tasks, job_cmp)
            for job in under_request[queue.name]:
                self._inside_job(ssn, job, task_cmp)

    def _between_jobs(self, ssn: Session, jobs: list[job_info.JobInfo], pending_tasks: dict[str, list[job_info.TaskInfo]], job_cmp: Callable[[job_info.JobInfo], Any]) -> None:
        while jobs:
            jobs.sort(key=job_cmp)
            job = jobs.pop(0)
            stmt = Statement(ssn)
            assigned = False
            tasks = pending_tasks[job.uid]
            while session_plugins.job_starving(ssn, job) and tasks:
                preemptor = tasks.pop(0)

                def other_job_same_queue(task: job_info.TaskInfo, preemptor: job_info.TaskInfo = preemptor, job: job_info.JobInfo = job) -> bool:
                    return ssn.jobs[task.job].queue == job.queue and task.job != preemptor.job

                assigned = preempt(ssn, stmt, preemptor, other_job_same_queue)
            if not session_plugins.job_pipelined(ssn, job):
                stmt.discard()
                continue
            stmt.commit()
            if assigned:
                jobs.append(job)

    def _inside_job(self, ssn: Session, job: job_info.JobInfo, task_cmp: Callable[[job_info.TaskInfo], Any]) -> None:
        for preemptor in sorted((t for t in job.by_status(job_info.TaskStatus.PENDING) if not t.sch_gated), key=task_cmp):
            stmt = Statement(ssn)

            def same_job(task: job_info.TaskInfo, preemptor: job_info.TaskInfo = preemptor) -> bool:
                return task.job == preemptor.job

            assigned = preempt(ssn, stmt, preemptor, same_job)
            stmt.commit()
            if not assigned:
                break
