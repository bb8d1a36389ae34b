"""Volcano's admission defaults, applied to the controller's copy of a Job (the webhook writes
them into the object; this slice applies them in memory until the webhook exists).

Upstream: pkg/webhooks/admission/jobs/mutate/mutate_job.go.
"""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_QUEUE = "default"
DEFAULT_SCHEDULER = "volcano"
DEFAULT_MAX_RETRY = 3


def with_defaults(job: dict[str, Any]) -> dict[str, Any]:
    job = copy.deepcopy(job)
    spec = job.setdefault("spec", {})
    spec.setdefault("queue", DEFAULT_QUEUE)
    if not spec.get("queue"):
        spec["queue"] = DEFAULT_QUEUE
    if not spec.get("schedulerName"):
        spec["schedulerName"] = DEFAULT_SCHEDULER
    spec.setdefault("maxRetry", DEFAULT_MAX_RETRY)
    total = 0
    for i, task in enumerate(spec.get("tasks") or []):
        if not task.get("name"):
            task["name"] = f"default{i}"
        task.setdefault("replicas", 1)
        if task.get("minAvailable") is None:
            task["minAvailable"] = task["replicas"]
        total += int(task["minAvailable"])
    if spec.get("minAvailable") is None:
        spec["minAvailable"] = total
    return job
