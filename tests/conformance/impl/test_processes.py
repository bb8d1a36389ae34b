"""The adapters' process handling: health names the first process that exited, with its log."""

from __future__ import annotations

import pathlib
import sys

from conformance.impl import processes


def test_first_exited_names_the_dead_process_and_its_last_log_lines(tmp_path: pathlib.Path) -> None:
    alive = processes.ManagedProcess("alive", [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"], tmp_path / "alive.log")
    dead = processes.ManagedProcess("dead", [sys.executable, "-c", "print('panic: no kubeconfig'); raise SystemExit(3)"], tmp_path / "dead.log")
    alive.start()
    dead.start()
    try:
        assert dead.proc is not None
        dead.proc.wait(timeout=30)  # the process's own end, not a timer
        assert processes.first_exited([None, alive]) is None
        report = processes.first_exited([None, alive, dead])
        assert report == "dead exited with 3; last log lines:\npanic: no kubeconfig"
    finally:
        alive.stop()
        dead.stop()
