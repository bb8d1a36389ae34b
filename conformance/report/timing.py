"""Where a run's time went: the slowest scenarios and the kit's own overhead per phase.

Printed at the end of `vck run -v`, read from the same result tree the reports are written from.
"""

from __future__ import annotations

from typing import Sequence

from conformance import results


def _runs(scenarios: Sequence[results.ScenarioResult]) -> list[results.ScenarioResult]:
    """Every run of a scenario: a repeated one's attempts, each counted."""
    return [a for sc in scenarios for a in (sc.attempts or (sc,))]


def slowest(scenarios: Sequence[results.ScenarioResult], count: int = 10) -> list[results.ScenarioResult]:
    return sorted(scenarios, key=lambda sc: sc.duration_s, reverse=True)[:count]


def phase_totals(scenarios: Sequence[results.ScenarioResult]) -> dict[str, float]:
    """Seconds per phase summed over every scenario run, overhead phases first, then the body."""
    totals = {name: 0.0 for name in (*results.PHASES_OVERHEAD, results.PHASE_BODY)}
    for sc in _runs(scenarios):
        for name, seconds in sc.phases_s.items():
            totals[name] = totals.get(name, 0.0) + seconds
    return totals


def _phases(sc: results.ScenarioResult) -> str:
    return ", ".join(f"{name} {seconds:.1f}" for name, seconds in sc.phases_s.items() if seconds >= 0.05) or "no phases recorded"


def text(run: results.RunResult, count: int = 10) -> str:
    """The slowest scenarios with their phases, then the totals: what `vck run -v` prints."""
    lines = [f"slowest {min(count, len(run.scenarios))} scenarios (seconds):"]
    for sc in slowest(run.scenarios, count):
        lines.append(f"  {sc.duration_s:6.1f}  {sc.suite}/{sc.id}  ({_phases(sc)})")
    totals = phase_totals(run.scenarios)
    overhead = sum(totals[name] for name in results.PHASES_OVERHEAD)
    scenario_time = sum(sc.duration_s + sc.overhead_s for sc in _runs(run.scenarios))
    share = f" ({overhead / scenario_time * 100:.0f}% of {scenario_time:.0f}s of scenario time)" if scenario_time else ""
    lines.append(f"kit overhead around scenarios: {overhead:.1f}s{share}: " + ", ".join(f"{name} {totals[name]:.1f}" for name in results.PHASES_OVERHEAD))
    setup = run.metadata.setup_s
    if setup:
        lines.append(f"kit setup before scenarios: {sum(setup.values()):.1f}s: " + ", ".join(f"{name} {seconds:.1f}" for name, seconds in setup.items()))
    lines.append(f"scenario bodies (setup objects, steps, windows): {totals[results.PHASE_BODY]:.1f}s; wall time {run.metadata.wall_time_s:.0f}s")
    return "\n".join(lines)
