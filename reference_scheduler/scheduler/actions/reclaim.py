"""reclaim: a starving job of a queue below its deserved share takes back resources from queues
using more than theirs, evicting from reclaimable queues only, one task at a time.

Upstream: pkg/scheduler/actions/reclaim/reclaim.go.
"""

from __future__ import annotations

import functools
import logging

from reference_scheduler.api import resource
from reference_scheduler.scheduler.actions import victims as victims_mod
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import session_plugins
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.framework.statement import Statement

log = logging.getLogger(__name__)
NAME = "reclaim"


class Reclaim:
    NAME = NAME

    def execute(self, ssn: Session) -> None:
        job_cmp = functools.cmp_to_key(session_plugins.job_order_key(ssn))
        task_cmp = functools.cmp_to_key(session_plugins.task_order_key(ssn))
        queue_cmp = functools.cmp_to_key(session_plugins.queue_order_key(ssn))
        found = victims_mod.claimants(ssn, task_cmp)
        reclaimers, pending_tasks = found.starving, found.pending_tasks
        # One task per turn from the queue that comes first, until no queue can go on.
        turn = list(found.queues.values())
        while turn:
            turn.sort(key=queue_cmp)
            queue = turn.pop(0)
            if session_plugins.overused(ssn, queue):
                continue
            jobs = reclaimers.get(queue.name) or []
            if not jobs:
                continue
            jobs.sort(key=job_cmp)
            job = jobs.pop(0)
            tasks = pending_tasks[job.uid]
            if not tasks or not session_plugins.job_starving(ssn, job):
                continue
            task = tasks.pop(0)
            if task.preempts_never:
                jobs.append(job)
                turn.append(queue)
                continue
            if not session_plugins.preemptive(ssn, queue, [task]):
                continue
            if self._reclaim_for(ssn, job, task):
                jobs.append(job)
            turn.append(queue)

    def _reclaim_for(self, ssn: Session, job: job_info.JobInfo, task: job_info.TaskInfo) -> bool:
        for node in victims_mod.candidate_nodes(ssn, task):
            candidates = []
            for other in node.tasks.values():
                owner = ssn.jobs.get(other.job)
                if other.status is not job_info.TaskStatus.RUNNING or not other.preemptable or owner is None:
                    continue
                if owner.queue != job.queue and ssn.queues[owner.queue].reclaimable:
                    candidates.append(other)
            if not candidates:
                continue
            chosen = session_plugins.reclaimable(ssn, task, candidates)
            if not victims_mod.enough(task, node, chosen):
                continue
            reclaimed = resource.Resource()
            for victim in victims_mod.in_eviction_order(ssn, task, chosen):
                log.info("reclaim: evicting %s/%s for %s/%s on %s", victim.namespace, victim.name, task.namespace, task.name, node.name)
                stmt = Statement(ssn)
                stmt.evict(victim, NAME)
                stmt.commit()
                reclaimed.add(victim.resreq)
                if task.resreq.less_equal(reclaimed):
                    break
            if task.resreq.less_equal(reclaimed):
                stmt = Statement(ssn)
                stmt.pipeline(task, node)
                stmt.commit()
                return True
        return False
