"""enqueue: move Pending PodGroups to Inqueue when the plugins' votes allow it, queue by queue.

Upstream: pkg/scheduler/actions/enqueue/enqueue.go.
"""

from __future__ import annotations

import functools

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session

NAME = "enqueue"


class Enqueue:
    NAME = NAME

    def execute(self, ssn: Session) -> None:
        by_queue: dict[str, list[job_info.JobInfo]] = {}
        for job in ssn.jobs.values():
            if job.queue not in ssn.queues:
                continue
            if job.is_pending():
                by_queue.setdefault(job.queue, []).append(job)
        job_key = functools.cmp_to_key(session_plugins.job_order_key(ssn))
        queue_key = functools.cmp_to_key(session_plugins.queue_order_key(ssn))
        for jobs in by_queue.values():
            jobs.sort(key=job_key)
        # One job per turn from the queue that comes first, until every queue is empty.
        while by_queue:
            queue = min((ssn.queues[name] for name in by_queue), key=queue_key)
            job = by_queue[queue.name].pop(0)
            if not by_queue[queue.name]:
                del by_queue[queue.name]
            if not job.has_min_resources() or session_plugins.job_enqueueable(ssn, job):
                session_plugins.job_enqueued(ssn, job)
                job.phase = "Inqueue"
