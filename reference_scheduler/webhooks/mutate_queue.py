"""Volcano's Queue defaults (pkg/webhooks/admission/queues/mutate/mutate_queue.go): weight 1 and
reclaimable true."""

from __future__ import annotations

import copy
from typing import Any


def with_defaults(queue: dict[str, Any]) -> dict[str, Any]:
    queue = copy.deepcopy(queue)
    spec = queue.setdefault("spec", {})
    if not spec.get("weight"):
        spec["weight"] = 1
    if spec.get("reclaimable") is None:
        spec["reclaimable"] = True
    return queue
