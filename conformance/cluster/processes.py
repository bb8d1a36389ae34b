"""Find and stop the processes a cluster started, by the state folder on their command line.

kwokctl's binary runtime starts etcd, kube-apiserver, kube-controller-manager and kwok as detached
processes whose flags all point into the cluster's state folder. Scanning /proc for that folder is
how `down` makes sure nothing is left behind, even after kwokctl itself was interrupted.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import signal
import time


@dataclasses.dataclass(frozen=True)
class Process:
    pid: int
    argv: tuple[str, ...]

    @property
    def name(self) -> str:
        return pathlib.Path(self.argv[0]).name if self.argv else "?"

    def rss_bytes(self) -> int:
        """Resident memory, 0 when the process is gone."""
        try:
            for line in pathlib.Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0


def under(folder: pathlib.Path) -> list[Process]:
    """Every live process (other than this one) whose command line mentions `folder`."""
    marker = str(folder.resolve())
    found = []
    me = os.getpid()
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        argv = tuple(a.decode(errors="replace") for a in raw.split(b"\0") if a)
        if any(marker in a for a in argv) and not _is_zombie(entry):
            found.append(Process(int(entry.name), argv))
    return found


def _is_zombie(entry: pathlib.Path) -> bool:
    try:
        return " Z " in (entry / "stat").read_text().split(")", 1)[1][:4]
    except (OSError, IndexError):
        return True


def stop(procs: list[Process], grace_s: float = 10.0) -> None:
    """SIGTERM, wait up to `grace_s` for them to exit, then SIGKILL what remains."""
    for proc in procs:
        send_signal(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    alive = procs
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if _alive(p.pid)]
        if alive:
            time.sleep(0.1)  # polling process exit: there is no event to wait on for a non-child
    for proc in alive:
        send_signal(proc.pid, signal.SIGKILL)


def send_signal(pid: int, sig: int) -> None:
    """The signal to the process, if it still runs."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name (state first), None for a process that is gone
    or a zombie (it has exited; only its parent has not reaped it)."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces or parentheses itself.
    fields = stat.rsplit(")", 1)[1].split()
    return fields if fields and fields[0] != "Z" else None


def _alive(pid: int) -> bool:
    return stat_fields(pid) is not None
