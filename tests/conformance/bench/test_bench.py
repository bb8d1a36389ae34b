"""`vck bench scheduler` end to end on a small embedded cluster: it reports every pod bound with
figures for the reference, and says so (exit 1) when an implementation binds nothing. Only the
outcome is asserted, never a time."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.cluster
REPO = pathlib.Path(__file__).resolve().parents[3]
ROW = re.compile(r"^(?P<impl>\S+)\s+(?P<nodes>\d+)\s+(?P<pods>\d+)\s+(?P<bound>\d+)\s+(?P<rate>[\d.]+)\s+(?P<p50>\S+)\s+(?P<p99>\S+)$", re.M)


def bench(tmp_path: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "bench", "scheduler", "--name", f"bench-{os.getpid()}", *args],
        cwd=REPO, env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")},
        capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )


def test_bench_binds_every_pod_and_prints_figures(tmp_path: pathlib.Path) -> None:
    proc = bench(tmp_path, "--nodes", "4", "--pods", "24", "--gang", "4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = ROW.search(proc.stdout)
    assert row is not None, proc.stdout
    assert (row["impl"], row["nodes"], row["pods"], row["bound"]) == ("reference", "4", "24", "24")
    assert float(row["rate"]) > 0 and row["p50"].endswith("s") and row["p99"].endswith("s")
    # The cluster it started is gone with its state.
    assert not (tmp_path / "state" / f"bench-{os.getpid()}").exists()


def test_bench_reports_an_implementation_that_binds_nothing(tmp_path: pathlib.Path) -> None:
    proc = bench(tmp_path, "--nodes", "2", "--pods", "8", "--gang", "4", "--impl", "reference:broken=allocate", "--timeout", "8")
    assert proc.returncode == 1
    row = ROW.search(proc.stdout)
    assert row is not None and row["bound"] == "0" and row["p50"] == "n/a", proc.stdout
    assert "only 0 of 8 pods were bound" in proc.stderr


def test_bench_refuses_pods_that_do_not_fill_whole_gangs(tmp_path: pathlib.Path) -> None:
    proc = bench(tmp_path, "--nodes", "1", "--pods", "10", "--gang", "4")
    assert proc.returncode == 2 and "not a multiple of --gang 4" in proc.stderr
