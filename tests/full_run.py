"""The full reference run, done once per test session and shared by every xdist worker.

It is the run `make demo` does (`vck run` with its defaults: every suite, the reference, the
embedded backend, `--jobs auto`). The suite tests judge its report instead of each running its
own suites again. The first worker to ask runs it under a file lock in the session's shared
temporary folder; the others wait on the lock and read the outcome it wrote.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from tests import suite_runs

# The whole run on a busy 2-core machine is about 5 minutes; this bounds a hung one.
TIMEOUT_S = 1800.0


@dataclasses.dataclass(frozen=True)
class FullRun:
    returncode: int
    stdout: str
    stderr: str
    # The run's report.json as a dict; None when no report was written.
    report: dict[str, Any] | None
    # The --reports folder: `run/` holds the three reports, `latest` points at it.
    reports: pathlib.Path


def _shared_root(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker's basetemp is a folder of the session's; the parent is shared.
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _run(folder: pathlib.Path) -> dict[str, Any]:
    reports = folder / "reports"
    try:
        proc = subprocess.run(
            # The committed reference run's durations put the long (CronJob) scenarios first.
            [sys.executable, "-m", "conformance.cli", "run", "--reports", str(reports), "--run-id", "run", "--durations", str(suite_runs.REPO / "reports" / "reference" / "report.json")],
            cwd=suite_runs.REPO, env={**os.environ, "VCK_STATE_DIR": str(folder / "state")},
            capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as err:
        return {"returncode": -1, "stdout": str(err.stdout or ""), "stderr": f"the full run did not end within {TIMEOUT_S:.0f}s", "report": None}
    report_path = reports / "run" / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr, "report": report}


def shared(tmp_path_factory: pytest.TempPathFactory) -> FullRun:
    root = _shared_root(tmp_path_factory)
    folder = root / "reference-run"
    outcome = folder / "outcome.json"
    with open(root / "reference-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not outcome.exists():
            folder.mkdir(exist_ok=True)
            # Written even when the run failed, so the other workers judge it rather than rerun it.
            outcome.write_text(json.dumps(_run(folder)))
    data = json.loads(outcome.read_text())
    return FullRun(data["returncode"], data["stdout"], data["stderr"], data["report"], folder / "reports")
