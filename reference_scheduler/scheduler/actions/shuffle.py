"""shuffle: evict the running tasks the plugins name as victims (the pdb plugin names those whose
disruption budget allows it, upstream's rescheduling and tdm plugins name others). The action
chooses nothing itself: without a plugin that names victims it does nothing.

Upstream: pkg/scheduler/actions/shuffle/shuffle.go.
"""

from __future__ import annotations

import logging

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)
NAME = "shuffle"


class Shuffle:
    NAME = NAME

    def execute(self, ssn: Session) -> None:
        running = [t for job in ssn.jobs.values() for t in job.tasks.values() if t.status is job_info.TaskStatus.RUNNING]
        for victim in session_plugins.victim_tasks(ssn, running):
            log.info("shuffle: evicting %s/%s", victim.namespace, victim.name)
            stmt = Statement(ssn)
            stmt.evict(victim, NAME)
            stmt.commit()
