"""`vck run --stress N` (conformance.stress): N processes busy on the CPU for the run's length,
gone when it ends, and gone soon after a run killed with -9."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time

from conformance import stress

REPO = pathlib.Path(__file__).resolve().parent.parent.parent


def _state(pid: int) -> str | None:
    """The process's state letter (R, S, Z, ...), None once it is gone."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def _cpu_ticks(pid: int) -> int:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _until(what: str, holds: object, deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while not holds():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not by {deadline_s:.0f}s: {what}"
        time.sleep(0.1)


def test_busy_processes_spin_for_the_block_and_are_gone_after() -> None:
    with stress.busy(2) as procs:
        assert len(procs) == 2
        for proc in procs:
            _until(f"process {proc.pid} uses the CPU", lambda proc=proc: _cpu_ticks(proc.pid) > 5, 30)
    assert all(proc.poll() is not None for proc in procs)
    with stress.busy(0) as none:
        assert none == []


def test_a_busy_process_leaves_when_the_run_that_started_it_is_killed() -> None:
    code = "from conformance import stress; import time; [p] = stress.start(1); print(p.pid, flush=True); time.sleep(600)"
    run = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert run.stdout is not None
    pid = int(run.stdout.readline())
    run.kill()
    run.wait()
    # Orphaned, it sees its parent change and exits (a zombie until init reaps it counts as gone).
    _until(f"busy process {pid} exits", lambda: _state(pid) in (None, "Z"), 30)
