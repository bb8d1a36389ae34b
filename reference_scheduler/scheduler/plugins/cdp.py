"""cdp (cooldown protection): a running pod that asks for a cooldown is no victim of preempt or
reclaim until it has been scheduled that long.

The pod's label `volcano.sh/cooldown-time` (else its annotation of the same name) holds a Go
duration (`30s`, `5m`); one that does not parse means no protection. The time is counted from
the lastTransitionTime of the pod's `PodScheduled` condition (status True), which the API server
sets when the pod is bound. Only a Running pod is protected; pods in any other phase stay
candidates. The plugin votes Permit with the remaining candidates, so when it leaves none the
tier decides nothing and the next tier's plugins are asked (session_plugins._victims).

Upstream: pkg/scheduler/plugins/cdp/cdp.go; docs/user-guide/how_to_use_cdp_plugin.md.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any, Callable, Mapping

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.plugins import sla

log = logging.getLogger(__name__)
NAME = "cdp"
COOLDOWN_KEY = "volcano.sh/cooldown-time"


def cooldown(pod: dict[str, Any]) -> datetime.timedelta | None:
    """The pod's cooldown (label first, then annotation), None when it asks for none or the value
    is not a Go duration. Upstream: podCooldownTime."""
    meta = pod.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    value = labels[COOLDOWN_KEY] if COOLDOWN_KEY in labels else annotations.get(COOLDOWN_KEY)
    if value is None:
        return None
    duration = sla.parse_duration(str(value))
    if duration is None:
        log.warning("cdp: pod %s/%s has %s=%r, not a Go duration; not protected", meta.get("namespace"), meta.get("name"), COOLDOWN_KEY, value)
    return duration


def _scheduled_at(pod: dict[str, Any]) -> datetime.datetime | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "True":
            stamp = condition.get("lastTransitionTime")
            if not stamp:
                return None
            return datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    return None


def cooling(pod: dict[str, Any], now: datetime.datetime) -> bool:
    """Is the pod Running and still within its cooldown since it was scheduled?"""
    period = cooldown(pod)
    if period is None or (pod.get("status") or {}).get("phase") != "Running":
        return False
    scheduled = _scheduled_at(pod)
    return scheduled is not None and scheduled + period > now


class Cdp:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any], clock: Callable[[], datetime.datetime] | None = None) -> None:
        self.arguments = arguments
        self.clock = clock or (lambda: datetime.datetime.now(datetime.timezone.utc))

    def on_session_open(self, ssn: Session) -> None:
        def victims(evictor: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            now = self.clock()
            return [t for t in candidates if not cooling(t.pod, now)], interface.PERMIT

        ssn.add_preemptable_fn(NAME, victims)
        ssn.add_reclaimable_fn(NAME, victims)

    def on_session_close(self, ssn: Session) -> None:
        return None
