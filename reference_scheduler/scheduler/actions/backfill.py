"""backfill: place best-effort tasks (no requests) of jobs that are past Pending, one by one.

Upstream: pkg/scheduler/actions/backfill/backfill.go.
"""

from __future__ import annotations

from reference_scheduler.scheduler.actions import allocate
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

NAME = "backfill"


class Backfill:
    NAME = NAME

    def execute(self, ssn: Session) -> None:
        for job in sorted(ssn.jobs.values(), key=lambda j: j.uid):
            if job.is_pending() or session_plugins.job_valid(ssn, job) is not None:
                continue
            for task in sorted(job.by_status(job_info.TaskStatus.PENDING), key=lambda t: t.name):
                if not task.best_effort:
                    continue
                node = allocate.place(ssn, task, job)
                if node is None or not task.resreq.less_equal(node.idle):
                    continue
                stmt = Statement(ssn)
                stmt.allocate(task, node)
                stmt.commit()
