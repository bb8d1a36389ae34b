"""Volcano's PodGroup rule on creation: its queue, when it names one, exists and is Open.

Upstream: pkg/webhooks/admission/podgroups/validate/validate_podgroup.go (checkQueueState), in its
words.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

QueueLookup = Callable[[str], Mapping[str, Any] | None]


def validate(podgroup: Mapping[str, Any], queue_of: QueueLookup) -> str:
    name = str((podgroup.get("spec") or {}).get("queue") or "")
    if not name:
        return ""
    queue = queue_of(name)
    if queue is None:
        return f'unable to find queue: queue.scheduling.volcano.sh "{name}" not found'
    state = (queue.get("status") or {}).get("state") or ""
    if state != "Open":
        return f"can only submit PodGroup to queue with state `Open`, queue `{name}` status is `{state}`"
    return ""
