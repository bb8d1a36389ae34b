"""Queues. Upstream: pkg/scheduler/api/queue_info.go."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference_scheduler.scheduler.api import resource


@dataclasses.dataclass
class QueueInfo:
    name: str
    weight: int
    capability: resource.Resource | None
    guarantee: resource.Resource
    state: str
    reclaimable: bool
    creation: str
    queue: dict[str, Any]

    @classmethod
    def from_queue(cls, queue: dict[str, Any]) -> QueueInfo:
        spec = queue.get("spec") or {}
        capability = spec.get("capability")
        return cls(
            name=queue["metadata"]["name"],
            weight=int(spec.get("weight") or 1),
            capability=resource.Resource.from_list(capability) if capability else None,
            guarantee=resource.Resource.from_list((spec.get("guarantee") or {}).get("resource")),
            # A queue the queue controller has not opened yet is treated as Open, as Volcano's
            # cache does for a queue without a state.
            state=(queue.get("status") or {}).get("state") or "Open",
            reclaimable=spec.get("reclaimable", True) is not False,
            creation=queue["metadata"].get("creationTimestamp", ""),
            queue=queue,
        )
