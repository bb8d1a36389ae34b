"""`vck run` refuses, before any cluster starts, what it could only get wrong: invalid scenario
files, an empty folder, an unknown broken-build name, a -k that selects nothing. Each refusal is one
clear line on stderr and exit status 2; none of these tests starts a cluster."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

from tests import suite_runs

BROKEN = suite_runs.REPO / "tests" / "data" / "broken_scenarios"


def vck(tmp_path: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args],
        cwd=suite_runs.REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        # Should a refusal fail to happen, no cluster may start either.
        env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state"), "VCK_NO_CLUSTERS": "1"},
    )


def test_invalid_scenario_files_refuse_the_run_and_are_each_named(tmp_path: pathlib.Path) -> None:
    tree = tmp_path / "scenarios" / "gang"
    tree.mkdir(parents=True)
    shutil.copy(suite_runs.REPO / "scenarios" / "gang" / "no-partial-gang.yaml", tree)
    bad = sorted(p for p in BROKEN.glob("*.yaml") if p.name.startswith(("bad-", "unknown-")))
    for path in bad:
        shutil.copy(path, tree / path.name)
    proc = vck(tmp_path, "run", str(tmp_path / "scenarios"), "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    for path in bad:
        assert f"{path.name}:" in proc.stderr, (path.name, proc.stderr)
    assert "CERTIFIED" not in proc.stdout and not (tmp_path / "reports").exists()


def test_an_empty_folder_is_refused(tmp_path: pathlib.Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = vck(tmp_path, "run", str(empty), "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2
    assert f"no scenario under {empty}" in proc.stderr, proc.stderr


def test_an_unknown_broken_feature_is_refused_with_the_known_ones(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "--impl", "reference:broken=nosuchplugin", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2
    assert "unknown nosuchplugin" in proc.stderr and "gang" in proc.stderr and "policies" in proc.stderr, proc.stderr


def test_jobs_must_be_auto_or_a_number(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "--jobs", "lots", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2 and "--jobs 'lots'" in proc.stderr, proc.stderr


def test_a_selection_that_matches_nothing_says_so(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "-k", "no-such-scenario", "--jobs", "1", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2
    assert "no scenario matches -k 'no-such-scenario'" in proc.stderr, proc.stderr
