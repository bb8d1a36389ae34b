"""Who owns an embedded cluster: the process that asked for it, recorded in its state folder.

`vck run` makes itself the owner of every cluster its workers start (VCK_RUN_OWNER, inherited by
the workers), so that when the run ends, however it ends (Ctrl-C, a CI cancel, a worker stopped in
the middle of a scenario), it can remove whatever its workers left behind. A cluster whose owner is
gone (`kill -9` of `vck run`) is listed by `vck cluster list` and removed by `vck cluster prune`.
A process id can be reused after its process exits, so an owner is its pid and its start time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pathlib
import sys
from typing import Iterator

from conformance.cluster import processes

OWNER_ENV = "VCK_RUN_OWNER"
OWNER_FILE = "owner.json"


@dataclasses.dataclass(frozen=True)
class Owner:
    pid: int
    # The process's start time in clock ticks since boot (/proc/PID/stat field 22).
    started: int
    command: str

    def alive(self) -> bool:
        return _start_time(self.pid) == self.started

    def same_process(self, other: Owner) -> bool:
        """The same process: its pid and its start time (a pid is reused once its process ends)."""
        return (self.pid, self.started) == (other.pid, other.started)


def _start_time(pid: int) -> int | None:
    fields = processes.stat_fields(pid)
    # Field 22 of the whole line: the 20th after the command name.
    return int(fields[19]) if fields is not None else None


def of_process(pid: int, command: str) -> Owner | None:
    """The owner a running process is (its pid and start time); None when it is gone."""
    started = _start_time(pid)
    return Owner(pid, started, command) if started is not None else None


def current() -> Owner:
    """The owner a cluster started now gets: the run named in VCK_RUN_OWNER, else this process."""
    named = os.environ.get(OWNER_ENV, "")
    pid = int(named) if named.isdigit() else os.getpid()
    try:
        command = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        command = " ".join(sys.argv)
    return Owner(pid, _start_time(pid) or 0, command)


def record(state: pathlib.Path, owner: Owner) -> None:
    (state / OWNER_FILE).write_text(json.dumps(dataclasses.asdict(owner)) + "\n")


def read(state: pathlib.Path) -> Owner | None:
    """The recorded owner; None for a cluster started before owners were recorded, or unreadable."""
    try:
        data = json.loads((state / OWNER_FILE).read_text())
        return Owner(int(data["pid"]), int(data["started"]), str(data.get("command", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def claimed_for_this_run() -> Iterator[Owner]:
    """This process owns every cluster started inside the block, by it or its workers; the owner
    it names before is back after (a run started from inside another, as the kit's own tests do,
    owns its clusters, not the outer one)."""
    before = os.environ.get(OWNER_ENV)
    os.environ[OWNER_ENV] = str(os.getpid())
    try:
        yield current()
    finally:
        if before is None:
            os.environ.pop(OWNER_ENV, None)
        else:
            os.environ[OWNER_ENV] = before
