"""A broken build through the command line: `vck run --impl reference:broken=gang` on the gang
suite exits 1, says NOT CERTIFIED, writes all three reports and points `latest` at them, and
explains the partial gang it caught. (The suite passing on the reference is
tests/e2e/test_reference_run.py; every other broken build runs in-process, tests/e2e/test_broken_builds.py.)"""

from __future__ import annotations

import pathlib
import subprocess
from typing import Any

import pytest

from tests.suite_runs import BROKEN_TIME_SCALE, vck_run

pytestmark = pytest.mark.cluster


def _vck_run(tmp_path: pathlib.Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The gang suite, checking the run wrote all three report files and pointed `latest` at them."""
    proc, report = vck_run(tmp_path, "--suite", "gang", *args, timeout_s=900)
    run = tmp_path / "reports" / "run"
    assert (run / "junit.xml").exists() and (run / "index.html").exists()
    assert (tmp_path / "reports" / "latest").resolve() == run.resolve()
    return proc, report


def test_gang_suite_fails_with_gang_switched_off(tmp_path: pathlib.Path) -> None:
    proc, report = _vck_run(tmp_path, "-k", "no-partial-gang", "--impl", "reference:broken=gang", "--time-scale", BROKEN_TIME_SCALE)
    assert proc.returncode == 1
    assert "NOT CERTIFIED" in proc.stdout
    failed = {s["id"]: s for s in report["scenarios"] if s["status"] == "failed"}
    # Without gang, the partial gang is bound: the scenario must catch it and say so.
    assert "gang-no-partial-gang" in failed, [(s["id"], s["status"]) for s in report["scenarios"]]
    reason = failed["gang-no-partial-gang"]["reason"]
    assert "no pod is bound" in reason and "held at" in reason
    for scenario in failed.values():
        bad = [c for c in scenario["checks"] if not c["passed"]]
        assert bad and all(c["expected"] and c["observed"] for c in bad)
