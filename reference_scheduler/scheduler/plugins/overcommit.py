"""overcommit: enqueue a job only while the cluster, overcommitted by a factor (default 1.2), has
room for its minimum resources beside what is used and what is already enqueued.

Upstream: pkg/scheduler/plugins/overcommit/overcommit.go.
"""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.api import resource
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import Session

NAME = "overcommit"
DEFAULT_FACTOR = 1.2


class Overcommit:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.factor = float(arguments.get("overcommit-factor", DEFAULT_FACTOR))
        if self.factor < 1.0:
            self.factor = DEFAULT_FACTOR

    def on_session_open(self, ssn: Session) -> None:
        used = resource.Resource()
        inqueue = resource.Resource()
        for job in ssn.jobs.values():
            for task in job.tasks.values():
                if task.status in job_info.ALLOCATED:
                    used.add(task.resreq)
            if job.phase == "Inqueue":
                # Enqueued but not yet running: its minimum is reserved, less what its gated pods
                # ask (they wait for their gates and must not hold others out).
                inqueue.add(job.deduct_sch_gated(job.min_resources()))
        idle = ssn.total_resource.clone().multiply(self.factor).sub(used)

        def enqueueable(job: job_info.JobInfo) -> int:
            if not job.has_min_resources():
                return interface.PERMIT
            min_req = job.min_resources()
            if min_req.clone().add(inqueue).less_equal(idle):
                return interface.PERMIT
            ssn.writer.event(job.podgroup, "Normal", "Unschedulable", "resource in cluster is overused")
            return interface.REJECT

        def enqueued(job: job_info.JobInfo) -> None:
            if job.has_min_resources():
                inqueue.add(job.deduct_sch_gated(job.min_resources()))

        ssn.add_job_enqueueable_fn(NAME, enqueueable)
        ssn.add_job_enqueued_fn(NAME, enqueued)

    def on_session_close(self, ssn: Session) -> None:
        return None
