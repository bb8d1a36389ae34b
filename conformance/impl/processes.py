"""Implementation processes: started with their log in a file, watched for a readiness line, stopped
with SIGTERM then SIGKILL."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import signal
import subprocess
import time
from typing import IO, Iterable, Sequence

from conformance.impl import base

STOP_GRACE_S = 10.0


@dataclasses.dataclass
class ManagedProcess:
    name: str
    argv: Sequence[str]
    log_path: pathlib.Path
    proc: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = None
    # Where the log ended when this process started: the log is appended to across restarts, and
    # a readiness line of an earlier run must not count.
    started_at: int = 0

    def start(self, env: dict[str, str] | None = None) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        self.started_at = self._log.tell()
        # A session of its own: a terminal's Ctrl-C reaches the kit, which stops it in order.
        self.proc = subprocess.Popen(list(self.argv), stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env)

    def wait_ready(self, marker: str, timeout_s: float, since: int | None = None) -> None:
        """Until the log shows `marker` (a regular expression) after byte `since` (default: where
        this process started writing); ImplementationError if the process exits first."""
        since = self.started_at if since is None else since
        pattern = re.compile(marker)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if pattern.search(self.log_since(since)):
                return
            if self.exited():
                raise base.ImplementationError(f"{self.name} exited with {self.proc.returncode if self.proc else '?'} while starting:\n{self.tail()}")
            time.sleep(0.05)  # polling a log file: the process signals readiness only by writing it
        raise base.ImplementationError(f"{self.name} did not log {marker!r} within {timeout_s:.0f}s:\n{self.tail()}")

    def log_since(self, offset: int) -> str:
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    def log_size(self) -> int:
        """Where the log ends now: pass it to wait_ready to wait for a line written after this."""
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def signal(self, signum: int) -> None:
        """Send a signal to the process itself (not its group)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signum)

    def exited(self) -> bool:
        return self.proc is None or self.proc.poll() is not None

    def tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


def first_exited(procs: Iterable[ManagedProcess | None]) -> str | None:
    """What an adapter's health() reports: the first of its processes that exited, with its last
    log lines; None while all run."""
    for proc in procs:
        if proc is not None and proc.exited():
            return f"{proc.name} exited with {proc.proc.returncode if proc.proc else '?'}; last log lines:\n{proc.tail()}"
    return None
