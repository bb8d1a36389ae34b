"""`vck report merge` (conformance/report/merge.py): the shards of one run make one run, certified
only when every shard ran whole; reports that are not the shards of one run are refused. That real
shards merge into the whole run's verdicts is tests/conformance/test_shards.py."""

from __future__ import annotations

import dataclasses

import pytest

from conformance import results
from conformance.report import merge, score
from tests.conformance.report.sample_run import scenario

PASSED = results.Status.PASSED


def shard(index: int, count: int, *ids: str, plan: str = "plan-a", **meta: object) -> results.RunResult:
    base = results.RunMetadata(
        f"shard-{index}", "reference", "embedded", {"kit": "0.1.0"}, f"2026-11-27T00:0{index}:00+00:00", 10.0 * index, 1.0, "vck run",
        selected=len(ids), shard=f"{index}/{count}", shard_plan=plan,
    )
    return results.RunResult(dataclasses.replace(base, **meta), tuple(scenario(i, "gang", PASSED) for i in ids))  # type: ignore[arg-type]


def test_every_shard_whole_makes_one_certified_run() -> None:
    merged = merge.merge([shard(2, 3, "b", "e"), shard(1, 3, "a", "d"), shard(3, 3, "c")], "merged")
    assert [sc.id for sc in merged.scenarios] == ["a", "b", "c", "d", "e"]
    assert merged.metadata.selected == 5 and merged.metadata.shard == "" and not merged.metadata.interrupted
    # Side by side: the run took as long as its longest shard, and started with the first.
    assert merged.metadata.wall_time_s == 30.0 and merged.metadata.started_at == "2026-11-27T00:01:00+00:00"
    assert score.certified(merged)


def test_a_missing_shard_is_never_certified() -> None:
    merged = merge.merge([shard(1, 3, "a"), shard(3, 3, "c")], "merged")
    assert merged.metadata.interrupted == "shard 2/3 did not run"
    assert not score.certified(merged)


def test_an_interrupted_shard_is_never_certified() -> None:
    merged = merge.merge([shard(1, 2, "a"), shard(2, 2, "b", interrupted="SIGTERM")], "merged")
    assert "shard 2/2 was interrupted (SIGTERM)" in merged.metadata.interrupted
    assert not score.certified(merged)


def test_a_failed_scenario_in_one_shard_fails_the_merged_run() -> None:
    failing = shard(2, 2, "b")
    failing = dataclasses.replace(failing, scenarios=(scenario("b", "gang", results.Status.FAILED),))
    assert not score.certified(merge.merge([shard(1, 2, "a"), failing], "merged"))


@pytest.mark.parametrize(("runs", "why"), [
    ([], "no report"),
    ([shard(1, 2, "a"), shard(1, 2, "b")], "shard 1 is given twice"),
    ([shard(1, 2, "a"), shard(2, 2, "a")], "scenario a was judged by two shards"),
    ([shard(1, 2, "a"), shard(2, 3, "b")], "split their runs differently"),
    ([shard(1, 2, "a"), shard(2, 2, "b", plan="plan-b")], "different splits"),
    ([shard(1, 2, "a"), shard(2, 2, "b", implementation="volcano:v1.13.3")], "judged volcano:v1.13.3"),
    ([shard(1, 2, "a"), shard(2, 2, "b", shard="")], "is not a shard"),
])
def test_reports_that_are_not_the_shards_of_one_run_are_refused(runs: list[results.RunResult], why: str) -> None:
    with pytest.raises(merge.MergeError, match=why):
        merge.merge(runs, "merged")
