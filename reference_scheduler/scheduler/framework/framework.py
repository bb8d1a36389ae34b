"""Opening and closing a session: plugins open, actions run, plugins close, PodGroup and Queue
status written.

Upstream: pkg/scheduler/framework/framework.go, session.go (jobStatus, getPodGroupPhase).
"""

from __future__ import annotations

import logging
from typing import Any

from reference_scheduler.scheduler import cache as cache_mod
from reference_scheduler.scheduler import conf
from reference_scheduler.scheduler.api import hyper_node_info, job_info
from reference_scheduler.scheduler.framework import queue_status, registry
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)


def open_session(cache: cache_mod.Cache, configuration: conf.Conf) -> Session:
    jobs, nodes, queues = cache.snapshot()
    ssn = Session(jobs, nodes, queues, configuration, cache)
    ssn.hypernodes, ssn.numatopologies = cache.topology()
    ssn.disruption_budgets = cache.disruption_budgets()
    ssn.resource_quotas = cache.resource_quotas()
    ssn.plugin_memory = cache.plugin_memory
    ssn.features = cache.features
    ssn.cpu_assignments = cache.cpu_assignments
    for tier in configuration.tiers:
        for option in tier:
            plugin = registry.plugin_builder(option.name)(option.arguments)
            ssn.plugins[option.name] = plugin
            plugin.on_session_open(ssn)
    return ssn


def podgroup_phase(job: job_info.JobInfo, unschedulable: bool) -> str:
    """Upstream: getPodGroupPhase."""
    running = job.count({job_info.TaskStatus.RUNNING})
    if running and unschedulable:
        return "Unknown"
    scheduled = job.count(job_info.SCHEDULED)
    completed = job.count(job_info.COMPLETED)
    if scheduled >= job.min_available and job.tasks:
        return "Completed" if scheduled == completed else "Running"
    if job.phase != "Inqueue":
        return "Pending"
    return job.phase


def _comparable(conditions: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    # Volcano does not rewrite a PodGroup whose conditions differ only in time and transition id.
    return sorted((c.get("type"), c.get("status"), c.get("reason"), c.get("message")) for c in conditions)


def close_session(ssn: Session, cache: cache_mod.Cache, original: dict[str, dict[str, Any]]) -> None:
    for plugin in ssn.plugins.values():
        plugin.on_session_close(ssn)
    for job in ssn.jobs.values():
        status = dict(job.podgroup.get("status") or {})
        conditions = status.get("conditions") or []
        unschedulable = any(c.get("type") == "Unschedulable" and c.get("status") == "True" and c.get("transitionID") == ssn.uid for c in conditions)
        status["phase"] = podgroup_phase(job, unschedulable)
        status["running"] = job.count({job_info.TaskStatus.RUNNING})
        status["succeeded"] = job.count({job_info.TaskStatus.SUCCEEDED})
        status["failed"] = job.count({job_info.TaskStatus.FAILED})
        before = original.get(job.uid) or {}
        if (
            before.get("phase") != status["phase"]
            or any(before.get(k, 0) != status[k] for k in ("running", "succeeded", "failed"))
            or _comparable(before.get("conditions") or []) != _comparable(conditions)
        ):
            cache.update_podgroup_status(job, status)
        # A HyperNode allocate recorded for the job this cycle. Upstream: JobUpdater.updateJob.
        hypernode = hyper_node_info.allocated_hypernode(job)
        if hypernode != ssn.allocated_hypernodes_before.get(job.uid, ""):
            cache.update_podgroup_annotations(job, {hyper_node_info.ALLOCATED_HYPERNODE: hypernode})
        if unschedulable and status["phase"] in ("Pending", "Inqueue", "Unknown"):
            message = next(c.get("message", "") for c in conditions if c.get("type") == "Unschedulable")
            cache.event(job.podgroup, "Warning", "Unschedulable", message)
            for task in job.by_status(job_info.TaskStatus.PENDING):
                # A gated pod keeps the SchedulingGated condition the API server gave it.
                if not task.sch_gated:
                    cache.event(task.pod, "Warning", "FailedScheduling", message)
    queue_status.update(ssn, cache)
    # The writes went out side by side (cache.STATUS_WORKERS); the session closes once they are
    # answered, so the next cycle starts from what they wrote. Upstream: JobUpdater.UpdateAll.
    cache.wait_writes()


def run_cycle(cache: cache_mod.Cache, configuration: conf.Conf) -> Session:
    ssn = open_session(cache, configuration)
    original = {uid: dict(job.podgroup.get("status") or {}) for uid, job in ssn.jobs.items()}
    for name in configuration.actions:
        registry.action_builder(name)().execute(ssn)
    close_session(ssn, cache, original)
    return ssn
