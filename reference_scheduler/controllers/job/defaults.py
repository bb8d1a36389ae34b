"""Volcano's Job defaults. The mutating webhook writes them into the object at creation; the
controller applies the same function to its copy, so a Job admitted without the webhook (or by
another implementation's webhook) is still handled the same way.

Upstream: pkg/webhooks/admission/jobs/mutate/mutate_job.go.
"""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_QUEUE = "default"
DEFAULT_SCHEDULER = "volcano"
DEFAULT_MAX_RETRY = 3
# Frameworks whose pods find each other through the svc plugin; mpi also needs ssh.
NEEDS_SVC = ("tensorflow", "mpi", "pytorch", "ray")


def default_task_min_available(task: dict[str, Any]) -> int:
    """A task's minAvailable when it names none: its replicas, or, when its partitionPolicy asks
    for a number of partitions, that many partitions' pods (v1.14; v1.14.0-v1.14.2 and v1.15.0
    gave every partitioned task minPartitions x partitionSize, 0 without minPartitions, fixed in
    v1.14.3 and v1.15.1)."""
    partitions = task.get("partitionPolicy") or {}
    wanted = int(partitions.get("minPartitions") or 0)
    if wanted > 0:
        return wanted * int(partitions.get("partitionSize") or 0)
    return int(task.get("replicas") or 0)


def with_defaults(job: dict[str, Any], scheduler_name: str = DEFAULT_SCHEDULER) -> dict[str, Any]:
    job = copy.deepcopy(job)
    spec = job.setdefault("spec", {})
    if not spec.get("queue"):
        spec["queue"] = DEFAULT_QUEUE
    if not spec.get("schedulerName"):
        spec["schedulerName"] = scheduler_name
    if not spec.get("maxRetry"):
        spec["maxRetry"] = DEFAULT_MAX_RETRY
    total = 0
    for i, task in enumerate(spec.get("tasks") or []):
        if not task.get("name"):
            task["name"] = f"default{i}"
        task.setdefault("replicas", 0)
        template_spec = (task.get("template") or {}).get("spec") or {}
        if template_spec.get("hostNetwork") and not template_spec.get("dnsPolicy"):
            template_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
        if task.get("minAvailable") is None:
            task["minAvailable"] = default_task_min_available(task)
        if not task.get("maxRetry"):
            task["maxRetry"] = DEFAULT_MAX_RETRY
        total += int(task["minAvailable"])
    if not spec.get("minAvailable"):
        spec["minAvailable"] = total
    plugins = spec.get("plugins")
    if plugins is not None:
        plugins = dict(plugins)
        if any(name in plugins for name in NEEDS_SVC):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
        spec["plugins"] = plugins
    return job
