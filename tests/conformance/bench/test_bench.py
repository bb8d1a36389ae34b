"""`vck bench scheduler` end to end on small embedded clusters: the ceiling binds every pod with no
scheduler; the reference binds every pod in scheduler-only and end-to-end modes, with figures for
each; an implementation that binds nothing is reported incomplete (exit 1) beside one that binds
everything. Only outcomes are asserted, never a time. (Each command measures the ceiling first,
so the two cover every mode but steady arrival, whose path differs only in when gangs are sent.)"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.cluster
REPO = pathlib.Path(__file__).resolve().parents[3]


def bench(tmp_path: pathlib.Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The command's outcome and its bench.json (empty when it wrote none)."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "bench", "scheduler", "--name", f"bench-{os.getpid()}", "--out", str(out), *args],
        cwd=REPO, env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")},
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )
    figures = out / "bench.json"
    return proc, json.loads(figures.read_text()) if figures.exists() else {}


def test_a_do_nothing_implementation_is_reported_incomplete_beside_the_reference(tmp_path: pathlib.Path) -> None:
    proc, data = bench(tmp_path, "--nodes", "4", "--pods", "24", "--gang", "4", "--impl", "reference", "--vs", "reference:broken=allocate", "--timeout", "8")
    assert proc.returncode == 1, proc.stderr[-3000:]
    # First the ceiling: with no scheduler, the bench's own client bound every pod.
    [ceiling] = data["ceilings"]
    assert (ceiling["pods"], ceiling["bound"], ceiling["failed"]) == (24, 24, 0), ceiling
    assert ceiling["creates_per_s"] > 0 and ceiling["binds_per_s"] > 0 and {"kube-apiserver", "etcd", "bench client"} <= set(ceiling["components"])
    reference, idle = data["runs"]
    assert (reference["impl"], reference["bound"], reference["complete"]) == ("reference", 24, True), reference
    assert reference["gang_s"]["complete"] == 6 and reference["gang_s"]["partial"] == 0
    assert reference["binds_per_s"] > 0 and reference["ratio_to_ceiling"] is not None and reference["bind_s"]["p99"] is not None
    assert reference["components"]["scheduler"]["rss_peak_mib"] > 0 and reference["components"]["kube-apiserver"]["cpu_s"] >= 0
    # The scheduler's binds are in the API server's log under its own name.
    assert any(w["client"] == "reference_scheduler.scheduler" and w["resource"] == "pods/binding" and w["count"] == 24 for w in reference["writes"])
    assert (idle["impl"], idle["bound"], idle["complete"]) == ("reference:broken=allocate", 0, False), idle
    assert idle["gang_s"]["p50"] is None and "only 0 of 24 pods were bound" in idle["problem"]
    assert data["complete"] is False
    assert "vck bench: reference:broken=allocate: only 0 of 24 pods were bound" in proc.stderr
    assert "reference / reference:broken=allocate" not in proc.stdout  # no ratio against nothing bound
    assert "<svg" in (tmp_path / "out" / "index.html").read_text()
    assert not (tmp_path / "state" / f"bench-{os.getpid()}").exists(), "the clusters it started are gone with their state"


def test_end_to_end_the_controller_makes_the_pods_of_volcano_jobs(tmp_path: pathlib.Path) -> None:
    proc, data = bench(tmp_path, "--mode", "end-to-end", "--nodes", "2", "--pods", "8", "--gang", "4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [run] = data["runs"]
    assert (data["workload"], run["mode"], run["bound"], run["gang_s"]["complete"]) == ("jobs", "end-to-end", 8, 2), run
    # The pods were the controller's, made after the start.
    assert any(w["client"] == "reference_scheduler.controllers" and w["resource"] == "pods" and w["verb"] == "create" and w["count"] == 8 for w in run["writes"])

