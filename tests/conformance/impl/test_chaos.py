"""The chaos wrapper (conformance.impl.chaos) as a process: it kills and restarts its child, and a
SIGTERM or SIGINT at any moment stops both at once (its handler only notes the signal: setting an
Event from a handler could deadlock the main thread that waits on it)."""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys

import pytest

from tests.suite_runs import REPO


def child(token: str) -> list[str]:
    """A child that says it is ready, then lives until killed; the token tells its processes
    from those of a test running beside this one."""
    return [sys.executable, "-c", f"import time; print('ready', flush=True); time.sleep(600)  # {token}"]


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_chaos_kills_and_restarts_its_child_and_stops_with_it_on_a_signal(stop_signal: signal.Signals) -> None:
    token = secrets.token_hex(8)
    command = [sys.executable, "-m", "conformance.impl.chaos", "--seed", "1", "--min-s", "0.1", "--max-s", "0.3", "--", *child(token)]
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if sum("chaos: killed" in seen for seen in lines) >= 3:
                break
        proc.send_signal(stop_signal)
        rest, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, "".join(lines) + rest
    assert "chaos: ready (first child is ready)" in "".join(lines)
    # Its children die with it: none is left sleeping.
    left = subprocess.run(["pgrep", "-f", token], capture_output=True, text=True)
    assert left.stdout.split() == [], left.stdout
