"""Who owns an embedded cluster: the process that asked for it, recorded in its state folder.

`vck run` makes itself the owner of every cluster its workers start (VCK_RUN_OWNER, inherited by
the workers), so that when the run ends, however it ends (Ctrl-C, a CI cancel, a worker stopped in
the middle of a scenario), it can remove whatever its workers left behind. A cluster whose owner is
gone (`kill -9` of `vck run`) is listed by `vck cluster list` and removed by `vck cluster prune`.
A process id can be reused after its process exits, so an owner is its pid and its start time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import sys

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


def _start_time(pid: int) -> int | None:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[19]) if fields[0] != "Z" else None


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


def claim_for_this_run() -> None:
    """Make this process the owner of every cluster started from here on, by it or its workers."""
    os.environ.setdefault(OWNER_ENV, str(os.getpid()))
