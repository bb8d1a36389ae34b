"""priority: higher-priority jobs and tasks first. Upstream: pkg/scheduler/plugins/priority/priority.go."""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework.session import Session

NAME = "priority"


def _compare(left: int, right: int) -> int:
    return 0 if left == right else (-1 if left > right else 1)


class Priority:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        ssn.add("jobOrder", NAME, lambda l, r: _compare(l.priority, r.priority))
        ssn.add("taskOrder", NAME, lambda l, r: _compare(l.priority, r.priority))

    def on_session_close(self, ssn: Session) -> None:
        return None


__all__ = ["job_info"]
