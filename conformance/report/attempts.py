"""A repeated scenario's verdict (`vck run --repeat N`): the same when every attempt ended alike,
FLAKY when they did not.

A conformance verdict must not depend on load or luck: a scenario whose attempts differ cannot
certify anybody's build, so FLAKY is never a pass. The combined result keeps every attempt (its
checks, timeline, phases) so the report can show them side by side, and takes its own checks and
timeline from the first attempt that did not pass: the evidence a reader needs first.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Iterable

from conformance import results

# The order statuses are named in a FLAKY scenario's reason.
_ORDER = (results.Status.PASSED, results.Status.FAILED, results.Status.ERROR, results.Status.NOT_CLAIMED, results.Status.NOT_APPLICABLE)


def combine(scenario_results: Iterable[results.ScenarioResult]) -> list[results.ScenarioResult]:
    """One result per scenario (by suite and id), in the order each scenario first appears. A
    scenario with one result is that result; several become one that holds them all in
    `attempts` (by attempt number): their common status, or FLAKY."""
    grouped: dict[tuple[str, str], list[results.ScenarioResult]] = {}
    for result in scenario_results:
        grouped.setdefault((result.suite, result.id), []).append(result)
    return [combine_attempts(group) if len(group) > 1 else group[0] for group in grouped.values()]


def combine_attempts(group: list[results.ScenarioResult]) -> results.ScenarioResult:
    attempts = tuple(sorted((dataclasses.replace(r, attempts=()) for r in group), key=lambda r: r.attempt))
    statuses = collections.Counter(r.status for r in attempts)
    total = len(attempts)
    if len(statuses) == 1:
        first = attempts[0]
        status = first.status
        reason = f"{first.reason} (all {total} attempts {status.value})"
        return dataclasses.replace(first, reason=reason, duration_s=_median(r.duration_s for r in attempts), attempt=0, attempts=attempts)
    evidence = next(r for r in attempts if r.status is not results.Status.PASSED)
    counts = ", ".join(f"{status.value} {statuses[status]}" for status in _ORDER if statuses[status])
    reason = f"FLAKY: {total} attempts ended differently ({counts}); attempt {evidence.attempt} {evidence.status.value}: {evidence.reason}"
    return dataclasses.replace(
        evidence, status=results.Status.FLAKY, reason=reason, duration_s=_median(r.duration_s for r in attempts), attempt=0, attempts=attempts,
    )


def _median(values: Iterable[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else round((ordered[middle - 1] + ordered[middle]) / 2, 3)


def attempts_text(result: results.ScenarioResult) -> str:
    """`passed, passed, failed` for a repeated scenario: each attempt's verdict in order."""
    return ", ".join(a.status.value for a in result.attempts)
