"""priority: higher-priority jobs and tasks first. Upstream: pkg/scheduler/plugins/priority/priority.go."""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import extension_points, interface
from reference_scheduler.scheduler.framework.session import Session

NAME = "priority"


def _compare(left: int, right: int) -> int:
    return 0 if left == right else (-1 if left > right else 1)


class Priority:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_job_order_fn(NAME, lambda left, right: _compare(left.priority, right.priority))
        ssn.add_task_order_fn(NAME, lambda left, right: _compare(left.priority, right.priority))

        def victims(preemptor: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            # Across jobs the jobs' priorities decide; inside one job, the tasks'.
            mine = ssn.jobs[preemptor.job]
            chosen = []
            for task in candidates:
                theirs = ssn.jobs[task.job]
                if theirs.uid != mine.uid:
                    if theirs.priority < mine.priority:
                        chosen.append(task)
                elif task.priority < preemptor.priority:
                    chosen.append(task)
            return chosen, interface.PERMIT

        def starving(job: job_info.JobInfo) -> bool:
            return job.ready_task_num() + job.waiting_task_num() < len(job.tasks)

        def unified(context: extension_points.EvictionContext, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            # gangpreempt takes only from jobs of strictly lower priority; reclaim ignores it.
            if context.kind != "gangpreempt":
                return candidates, interface.PERMIT
            return [t for t in candidates if ssn.jobs[t.job].priority < context.job.priority], interface.PERMIT

        ssn.add_preemptable_fn(NAME, victims)
        ssn.add_unified_evictable_fn(NAME, unified)
        ssn.add_job_starving_fn(NAME, starving)

    def on_session_close(self, ssn: Session) -> None:
        return None

