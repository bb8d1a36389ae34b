"""Queues. Upstream: pkg/scheduler/api/queue_info.go."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference_scheduler.api import resource

HIERARCHY_ANNOTATION = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION = "volcano.sh/hierarchy-weights"


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
    # What the capacity plugin reads: spec.deserved (None when not set), spec.parent and
    # spec.priority (a higher priority queue goes first).
    deserved: resource.Resource | None = None
    parent: str = ""
    priority: int = 0
    # What drf reads with enableHierarchy: the path from the root (`root/eng/dev`) and one weight
    # per level (`1/2/8`), from the queue's annotations. Upstream: NewQueueInfo.
    hierarchy: str = ""
    weights: str = ""

    @classmethod
    def from_queue(cls, queue: dict[str, Any]) -> QueueInfo:
        spec = queue.get("spec") or {}
        capability = spec.get("capability")
        deserved = spec.get("deserved")
        annotations = queue["metadata"].get("annotations") or {}
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
            deserved=resource.Resource.from_list(deserved) if deserved else None,
            parent=spec.get("parent") or "",
            priority=int(spec.get("priority") or 0),
            hierarchy=annotations.get(HIERARCHY_ANNOTATION, ""),
            weights=annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, ""),
        )
