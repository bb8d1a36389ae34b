"""The gang suite end to end through `vck run`: it passes on the reference implementation, and fails,
with a readable reason, on the same implementation with the gang plugin switched off."""

from __future__ import annotations

import pathlib
import subprocess
from typing import Any

import pytest

from tests.suite_runs import explain, vck_run, verdicts

pytestmark = pytest.mark.cluster


def _vck_run(tmp_path: pathlib.Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The gang suite, checking the run wrote all three report files and pointed `latest` at them."""
    proc, report = vck_run(tmp_path, "--suite", "gang", *args, timeout_s=900)
    run = tmp_path / "reports" / "run"
    assert (run / "junit.xml").exists() and (run / "index.html").exists()
    assert (tmp_path / "reports" / "latest").resolve() == run.resolve()
    return proc, report


def test_gang_suite_passes_on_the_reference(tmp_path: pathlib.Path) -> None:
    proc, report = _vck_run(tmp_path)
    statuses = verdicts(report)
    assert statuses and set(statuses.values()) == {"passed"}, explain(report)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "CERTIFIED" in proc.stdout and report["summary"]["certified"] is True


def test_gang_suite_fails_with_gang_switched_off(tmp_path: pathlib.Path) -> None:
    proc, report = _vck_run(tmp_path, "--impl", "reference:broken=gang")
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
