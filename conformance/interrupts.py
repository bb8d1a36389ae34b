"""Ctrl-C (SIGINT), a CI cancel (SIGTERM) and the run's own `--timeout` end a run the same way.

The first signal is recorded and raised as KeyboardInterrupt, so every `finally` on the way out
runs (implementations stopped, clusters removed) and pytest ends the session and writes what ran,
marked interrupted: such a report is never certified. The exit status is the shell's for the
signal (130 for SIGINT, 143 for SIGTERM), and 124 for the timeout, as timeout(1) says it.
"""

from __future__ import annotations

import contextlib
import signal
from types import FrameType
from typing import Iterator

HANDLED = (signal.SIGINT, signal.SIGTERM)


TIMEOUT_STATUS = 124


class Interrupts:
    """Which signal ended the process's run, if any (one per process: signals are per process)."""

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self.deadline_s: float | None = None
        # Inside `deferred()`: a signal is recorded and raised only when the section ends.
        self._deferring = 0
        self._pending = False

    def install(self) -> None:
        for signum in HANDLED:
            signal.signal(signum, self._handle)

    def arm_deadline(self, seconds: float) -> None:
        """End the run like a signal once `seconds` have passed (SIGALRM)."""
        self.deadline_s = seconds
        signal.signal(signal.SIGALRM, self._handle)
        signal.setitimer(signal.ITIMER_REAL, seconds)

    def disarm(self) -> None:
        if self.deadline_s is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.interrupt(signum)

    def interrupt(self, signum: int) -> None:
        """Record the signal and raise it as KeyboardInterrupt, or hold it until `deferred()` ends
        (for a handler of the process's own, a dev session's)."""
        if self.received is None:
            self.received = signal.Signals(signum)
        if self._deferring:
            self._pending = True
            return
        raise KeyboardInterrupt(self.describe())

    def forget(self) -> None:
        """A process that outlives an interruption (a dev session): the next one is its own."""
        self.received = None
        self._pending = False

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Hold the interruption while the body runs (writing a report: its files stay
        consistent); one that came meanwhile is raised when the body is done.

        Done in the handler rather than with the thread's signal mask: the kernel delivers a
        process-directed signal to any thread that does not block it (the API client's, say), and
        Python then runs the handler in the main thread whatever the main thread's mask."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
        if not self._deferring and self._pending:
            self._pending = False
            raise KeyboardInterrupt(self.describe())

    def describe(self) -> str:
        if self.received is signal.SIGALRM:
            return f"timeout ({self.deadline_s:g}s)"
        return self.received.name if self.received is not None else ""

    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a process a signal ended; 124 for the
        run's own timeout."""
        if self.received is signal.SIGALRM:
            return TIMEOUT_STATUS
        return 128 + int(self.received or signal.SIGINT)


# The process's own record: the CLI installs it, the pytest plugin (in the same process) reads it.
RECORD = Interrupts()


def reason(error: BaseException | None = None) -> str:
    """What to write in a report's `interrupted`: the signal received, else the error's name."""
    if RECORD.received is not None:
        return RECORD.describe()
    if isinstance(error, KeyboardInterrupt):
        return "SIGINT"
    return error.__class__.__name__ if error is not None else "interrupted"


def deferred() -> contextlib.AbstractContextManager[None]:
    """The process's record's `deferred()`: hold SIGINT, SIGTERM and the deadline while writing."""
    return RECORD.deferred()


def forget_caught_interrupts() -> None:
    """Make the exit status the one the process returns, even after a KeyboardInterrupt it caught.

    CPython remembers a KeyboardInterrupt raised inside exec() or eval() of a string (a signal
    landing while a dataclass is defined, which runs exec(), during an import) even when the
    program catches it, and a `python -m` process then ends by SIGINT whatever status it returns
    (a script, as the `vck` entry point, exits with its status): a run stopped by SIGTERM early in
    its start-up exited -2, not 143. Running exec() of a string once more, uninterrupted, clears
    that memory (the interpreter resets it before each such run).
    """
    exec("pass")


def drop_lineless_frames(error: BaseException) -> None:
    """Unlink traceback entries that have no line number from `error` and the errors chained to it.

    A KeyboardInterrupt raised by a signal handler can carry an entry for the interrupted frame
    without a line (seen on Python 3.11), and pytest fails while rendering such a traceback; a
    report of the interruption matters more than that one frame.
    """
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        head = current.__traceback__
        while head is not None and head.tb_lineno is None:
            head = head.tb_next
        entry = head
        while entry is not None:
            while entry.tb_next is not None and entry.tb_next.tb_lineno is None:
                entry.tb_next = entry.tb_next.tb_next
            entry = entry.tb_next
        current.__traceback__ = head
        pending += [current.__context__, current.__cause__]
