"""`--jobs auto` and the figures `vck run -v` prints about where a run's time went."""

from __future__ import annotations

import pytest

from conformance import api, parallel, results
from conformance.report import timing


@pytest.mark.parametrize(
    ("scenarios", "cores", "memory_mib", "expected"),
    [
        (303, 2, 22_000, 4),  # the development machine: two workers per core
        (303, 1, 22_000, 2),
        (303, 16, 64_000, parallel.MAX_AUTO_WORKERS),  # capped: more clusters only add start-up work
        (303, 4, 3_500, 2),  # memory bounds it: one worker holds about a GiB
        (303, 4, 1_500, 1),  # never fewer than one
        (8, 2, 22_000, 2),  # a small suite: one worker per four scenarios (the gang suite)
        (3, 2, 22_000, 1),  # never more workers than scenarios, nor a start for too few
        (1, 8, 22_000, 1),
        (303, 2, None, 4),  # memory unknown: cores decide
    ],
)
def test_auto_workers(scenarios: int, cores: int, memory_mib: int | None, expected: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "available_memory_mib", lambda: memory_mib)
    assert parallel.auto_workers(scenarios, cores=cores) == expected


def test_jobs_is_auto_or_a_positive_number() -> None:
    assert parallel.parse_jobs("auto") == parallel.AUTO
    assert parallel.parse_jobs("3") == 3
    for bad in ("0", "-2", "many", ""):
        with pytest.raises(ValueError, match="--jobs"):
            parallel.parse_jobs(bad)


def test_run_config_defaults_to_auto_and_asks_xdist_to_steal_work() -> None:
    config = api.RunConfig(suites=["gang"])
    assert config.jobs == parallel.AUTO and not config.validate()
    args = api.pytest_args(config)
    workers = parallel.auto_workers(len(config.selected()))
    if workers > 1:
        assert args[args.index("-n") + 1] == str(workers) and args[args.index("--dist") + 1] == "worksteal"
    assert "-n" not in api.pytest_args(api.RunConfig(suites=["gang"], jobs=1))
    assert any("--jobs" in p for p in api.RunConfig(jobs="none").validate())


def test_a_keyword_selecting_one_scenario_starts_one_worker() -> None:
    """`vck run -k gang-full-occupancy` once started a worker per four of all 378 scenarios: the
    count is that of what -k leaves, judged by pytest's collection."""
    config = api.RunConfig(keyword="gang-full-occupancy")
    assert not api.problems(config)
    assert config.keyword_ids == ("gang-full-occupancy",)
    assert config.workers() == 1 and "-n" not in api.pytest_args(config)
    wide = api.RunConfig(keyword="gang or queue")
    assert not api.problems(wide) and wide.keyword_ids is not None
    assert wide.workers() == parallel.auto_workers(len(wide.keyword_ids)) and len(wide.keyword_ids) < len(wide.selected())
    # Repeated, one scenario is still one scenario's worth of workers per attempt; and a -k
    # changed after it was judged is judged again.
    repeated = api.RunConfig(keyword="gang-full-occupancy", repeat=4)
    assert not api.problems(repeated) and repeated.keyword_ids == ("gang-full-occupancy",)
    assert repeated.workers() == parallel.auto_workers(4)
    repeated.keyword = "gang or queue"
    assert repeated.workers() == parallel.auto_workers(len(repeated.selected()) * 4)


def _result(name: str, duration: float, phases: dict[str, float]) -> results.ScenarioResult:
    return results.ScenarioResult(
        id=name, suite="s", title=name, level=results.Level.MUST, cites=(), requires=(), path="p",
        status=results.Status.PASSED, reason="", duration_s=duration, phases_s=phases,
    )


def test_timing_lists_the_slowest_and_sums_the_overhead() -> None:
    scenarios = tuple(_result(f"sc-{i}", float(i), {"nodes": 0.5, "implementation": 0.25, "body": i - 0.75}) for i in range(1, 13))
    meta = results.RunMetadata("r", "reference", "embedded", {}, "", 42.0, 1.0, "vck run", setup_s={"implementation build": 300.0, "gw0 cluster": 6.5})
    text = timing.text(results.RunResult(meta, scenarios))
    listed = [line.split()[1] for line in text.splitlines()[1:11]]
    assert listed == [f"s/sc-{i}" for i in range(12, 2, -1)]
    assert "kit overhead around scenarios: 9.0s" in text and "nodes 6.0" in text and "implementation 3.0" in text
    # The kit's setup is its own line, never a scenario's time.
    assert "kit setup before scenarios: 306.5s: implementation build 300.0, gw0 cluster 6.5" in text
    assert scenarios[0].overhead_s == 0.75
