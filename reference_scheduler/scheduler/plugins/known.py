"""Volcano plugins the reference knows by name but does not implement: usage and rescheduling
(they read node load from a metrics source) and extender (an HTTP server speaking Volcano's
internal types); scenarios/plugins-not-judged/README.md says why. They register nothing, so a
conf naming them loads, and the reference does not claim them (reference_scheduler/capabilities.yaml):
scenarios needing them are reported as not claimed.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAMES: tuple[str, ...] = ("extender", "rescheduling", "usage")


class NotImplemented_:
    def __init__(self, name: str, arguments: Mapping[str, Any]) -> None:
        self.NAME = name
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        return None

    def on_session_close(self, ssn: Session) -> None:
        return None
