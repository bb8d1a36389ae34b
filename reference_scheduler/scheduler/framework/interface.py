"""The Action and Plugin protocols. Upstream: pkg/scheduler/framework/interface.go."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from reference_scheduler.scheduler.framework.session import Session

# Votes of the vote-based extension points (pipelined, enqueueable). Upstream: util.Permit etc.
PERMIT = 1
ABSTAIN = 0
REJECT = -1


class Action(Protocol):
    NAME: str

    def execute(self, ssn: Session) -> None: ...


class Plugin(Protocol):
    NAME: str

    def on_session_open(self, ssn: Session) -> None: ...

    def on_session_close(self, ssn: Session) -> None: ...
