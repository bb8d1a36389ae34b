"""conformance: never evict critical pods or anything in kube-system.

Upstream: pkg/scheduler/plugins/conformance/conformance.go.
"""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import Session

NAME = "conformance"
CRITICAL_CLASSES = frozenset({"system-cluster-critical", "system-node-critical"})


def evictable(task: job_info.TaskInfo) -> bool:
    spec = task.pod.get("spec") or {}
    return spec.get("priorityClassName") not in CRITICAL_CLASSES and task.namespace != "kube-system"


class Conformance:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        def victims(evictor: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            return [t for t in candidates if evictable(t)], interface.PERMIT

        ssn.add_preemptable_fn(NAME, victims)
        ssn.add_reclaimable_fn(NAME, victims)
        ssn.add_unified_evictable_fn(NAME, lambda context, candidates: ([t for t in candidates if evictable(t)], interface.PERMIT))

    def on_session_close(self, ssn: Session) -> None:
        return None
