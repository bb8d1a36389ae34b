"""`vck run --shard K/N` (conformance/shards.py): every shard of a selection computes the same
split, the shards cover it exactly once, and `vck report merge` of real shards gives the whole
run's verdicts."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from conformance import shards
from tests import full_run, suite_runs

NAMES = [f"scenario-{i:02d}" for i in range(23)]
# Eight short scenarios: three shards of two or three each.
SUITE = "queue-state"


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", ""])
def test_a_shard_is_k_of_n(text: str) -> None:
    with pytest.raises(ValueError, match="expected K/N"):
        shards.parse(text)


@pytest.mark.parametrize("durations", [{}, {name: float(i % 7 + 1) for i, name in enumerate(NAMES)}], ids=["by-count", "by-durations"])
def test_the_shards_cover_the_selection_once_whatever_its_order(durations: dict[str, float]) -> None:
    parts = [shards.pick(NAMES, str, shards.Shard(k, 4), durations) for k in range(1, 5)]
    assert sorted(name for part in parts for name in part) == NAMES
    # Another order of the same selection (another machine's file listing): the same split.
    again = [shards.pick(list(reversed(NAMES)), str, shards.Shard(k, 4), durations) for k in range(1, 5)]
    assert [sorted(p) for p in parts] == [sorted(p) for p in again]
    assert all(parts)


def test_durations_balance_the_shards_by_time() -> None:
    # One long scenario and many short ones: by count, the long one's shard would take far longer.
    durations = {name: 1.0 for name in NAMES} | {"scenario-00": 20.0}
    loads = [sum(durations[n] for n in shards.pick(NAMES, str, shards.Shard(k, 2), durations)) for k in (1, 2)]
    assert abs(loads[0] - loads[1]) <= 1.0, loads
    assert shards.pick(NAMES, str, shards.Shard(1, 2), durations) == ["scenario-00"] + [n for n in shards.pick(NAMES, str, shards.Shard(1, 2), durations) if n != "scenario-00"]


def test_the_plan_names_the_split() -> None:
    plan = shards.plan(NAMES, 3, {}, None)
    assert plan == shards.plan(list(reversed(NAMES)), 3, {}, None)
    assert plan != shards.plan(NAMES, 3, {}, "gang")
    assert plan != shards.plan(NAMES, 3, {"scenario-22": 100.0, "scenario-00": 1.0}, None)
    assert plan != shards.plan(NAMES[:-1], 3, {}, None)


def _merge(reports: pathlib.Path, *shard_ids: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "report", "merge", *shard_ids, "--reports", str(reports), "--run-id", "merged-" + "-".join(shard_ids)],
        cwd=suite_runs.REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


@pytest.mark.cluster
def test_three_real_shards_merge_into_the_whole_runs_verdicts(tmp_path: pathlib.Path, request: pytest.FixtureRequest) -> None:
    """A suite of eight short scenarios as three shards, each its own `vck run` and cluster;
    merged, the verdicts of the whole run (the full reference run's part). A merge without one
    shard is not certified; one given twice is refused."""
    reports = tmp_path / "reports"
    durations = str(suite_runs.REPO / "reports" / "reference" / "report.json")
    # The three side by side, as CI jobs would run them.
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "conformance.cli", "run", "--suite", SUITE, "--shard", f"{k}/3", "--durations", durations,
             "--jobs", "1", "--reports", str(reports), "--run-id", f"shard-{k}"],
            cwd=suite_runs.REPO, env={**os.environ, "VCK_STATE_DIR": str(tmp_path / f"state-{k}")},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
        )
        for k in (1, 2, 3)
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out[-3000:]
    assert not (reports / "latest").exists(), "a shard is not a whole run: `latest` stays"
    parts = [json.loads((reports / f"shard-{k}" / "report.json").read_text()) for k in (1, 2, 3)]
    assert all(part["run"]["shard"] == f"{k}/3" and part["scenarios"] for k, part in zip((1, 2, 3), parts, strict=True))

    merged = _merge(reports, "shard-1", "shard-2", "shard-3")
    assert merged.returncode == 0 and merged.stdout.startswith("CERTIFIED"), merged.stdout + merged.stderr
    report = json.loads((reports / "merged-shard-1-shard-2-shard-3" / "report.json").read_text())
    # The whole run's verdicts, asked for only now: the shards did not wait on the full run.
    reference_run: full_run.FullRun = request.getfixturevalue("reference_run")
    assert reference_run.report is not None, reference_run.stderr[-3000:]
    assert suite_runs.verdicts(report) == {s["id"]: s["status"] for s in reference_run.report["scenarios"] if s["suite"] == SUITE}
    assert report["summary"]["certified"] is True and (reports / "latest").resolve().name == "merged-shard-1-shard-2-shard-3"

    missing = _merge(reports, "shard-1", "shard-3")
    assert missing.returncode == 1 and "shard 2/3 did not run" in missing.stdout, missing.stdout + missing.stderr

    doubled = _merge(reports, "shard-1", "shard-1")
    assert doubled.returncode == 2 and "given twice" in doubled.stderr
