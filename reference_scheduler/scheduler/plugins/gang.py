"""gang: a job runs only with at least minMember tasks placeable; the PodGroup says why not.

Upstream: pkg/scheduler/plugins/gang/gang.go.
"""

from __future__ import annotations

import datetime
from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info, sub_job_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import Session

NAME = "gang"
NOT_ENOUGH_PODS = "NotEnoughTasks"
NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPodsOfTask"
NOT_ENOUGH_RESOURCES = "NotEnoughResources"
UNSCHEDULABLE = "Unschedulable"
SCHEDULED = "Scheduled"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_task_ready(job: job_info.JobInfo) -> bool:
    """Each role with its own minimum has that many ready tasks. Upstream: JobInfo.CheckTaskReady."""
    if job.min_available < job.task_min_available_total():
        return True
    ready: dict[str, int] = {}
    for task in job.tasks.values():
        if task.status in job_info.READY or (task.status is job_info.TaskStatus.PENDING and task.best_effort):
            ready[task.role] = ready.get(task.role, 0) + 1
    return all(ready.get(role, 0) >= need for role, need in job.min_task_member.items())


class Gang:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        def valid(job: job_info.JobInfo) -> tuple[str, str] | None:
            if not job.check_task_valid():
                return NOT_ENOUGH_PODS_OF_TASK, "Not enough valid pods of each task for gang-scheduling"
            if not sub_job_info.check_valid(job):
                return NOT_ENOUGH_PODS_OF_TASK, "Not enough valid subGroups of each task for gang-scheduling"
            valid_num = job.valid_task_num()
            if valid_num < job.min_available:
                return NOT_ENOUGH_PODS, f"Not enough valid tasks for gang-scheduling, valid: {valid_num}, min: {job.min_available}"
            return None

        def ready(job: job_info.JobInfo) -> bool:
            # A PodGroup's subGroupPolicy may also ask for a number of ready sub-jobs (v1.14).
            return check_task_ready(job) and sub_job_info.check_ready(job) and job.is_ready()

        def pipelined(job: job_info.JobInfo) -> int:
            return interface.PERMIT if job.is_pipelined() else interface.REJECT

        def order(left: job_info.JobInfo, right: job_info.JobInfo) -> int:
            # Jobs whose gang is not complete yet go first.
            lr, rr = left.is_ready(), right.is_ready()
            if lr == rr:
                return 0
            return 1 if lr else -1

        def victims(evictor: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            # A job gives up tasks only while it keeps more than minAvailable ready.
            chosen = []
            occupied: dict[str, int] = {}
            for task in candidates:
                job = ssn.jobs[task.job]
                occupied.setdefault(job.uid, job.ready_task_num())
                if occupied[job.uid] > job.min_available:
                    occupied[job.uid] -= 1
                    chosen.append(task)
            return chosen, interface.PERMIT

        def starving(job: job_info.JobInfo) -> bool:
            return job.is_starving()

        ssn.add_preemptable_fn(NAME, victims)
        ssn.add_reclaimable_fn(NAME, victims)
        # gangpreempt and gangreclaim keep gangs whole by their bundles, not here.
        ssn.add_unified_evictable_fn(NAME, lambda context, candidates: (candidates, interface.PERMIT))
        ssn.add_job_starving_fn(NAME, starving)
        ssn.add_job_valid_fn(NAME, valid)
        ssn.add_job_ready_fn(NAME, ready)
        ssn.add_job_pipelined_fn(NAME, pipelined)
        ssn.add_job_order_fn(NAME, order)

    def on_session_close(self, ssn: Session) -> None:
        for job in ssn.jobs.values():
            if not job.tasks:
                continue
            if not job.is_ready():
                # Placements of a discarded statement are back to Pending: only ready tasks count.
                schedulable = job.ready_task_num()
                unready = job.min_available - schedulable
                message = f"{unready}/{len(job.tasks)} tasks in gang unschedulable: {job.fit_error()}"
                ssn.update_condition(job, {
                    "type": UNSCHEDULABLE, "status": "True", "lastTransitionTime": _now(),
                    "transitionID": ssn.uid, "reason": NOT_ENOUGH_RESOURCES, "message": message,
                })
            else:
                ssn.update_condition(job, {
                    "type": SCHEDULED, "status": "True", "lastTransitionTime": _now(),
                    "transitionID": ssn.uid, "reason": "tasks in gang are ready to be scheduled", "message": "",
                })
