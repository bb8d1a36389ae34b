"""Volcano plugins this slice knows by name but does not implement yet (none left now that
drf, capacity and nodeorder are implemented). They register nothing, so a conf naming them loads,
and the reference does not claim them (reference_scheduler/capabilities.yaml): scenarios needing
them are reported as not claimed.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAMES: tuple[str, ...] = ()


class NotImplemented_:
    def __init__(self, name: str, arguments: Mapping[str, Any]) -> None:
        self.NAME = name
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        return None

    def on_session_close(self, ssn: Session) -> None:
        return None
