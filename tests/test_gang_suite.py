"""The gang suite end to end through `vck run`: it passes on the reference implementation, and fails,
with a readable reason, on the same implementation with the gang plugin switched off."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.cluster
REPO = pathlib.Path(__file__).resolve().parent.parent


def _vck_run(tmp_path: pathlib.Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    reports = tmp_path / "reports"
    env = {**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")}
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--suite", "gang", "--reports", str(reports), "--run-id", "run", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )
    report = reports / "run" / "report.json"
    assert report.exists(), f"no report written\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert (reports / "run" / "junit.xml").exists() and (reports / "run" / "index.html").exists()
    assert (reports / "latest").resolve() == (reports / "run").resolve()
    return proc, json.loads(report.read_text())


def test_gang_suite_passes_on_the_reference(tmp_path: pathlib.Path) -> None:
    proc, report = _vck_run(tmp_path)
    statuses = {s["id"]: s["status"] for s in report["scenarios"]}
    assert statuses and set(statuses.values()) == {"passed"}, json.dumps([(s["id"], s["status"], s["reason"]) for s in report["scenarios"]], indent=1)
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
