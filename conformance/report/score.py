"""Scoring: per suite and overall, MUST weighted over SHOULD; `certified` when every claimed MUST passed.

A FLAKY scenario (repeated, its attempts ended differently) is judged and never passed: it weighs
in the score as a failure would, and a FLAKY MUST scenario keeps the run from being certified."""

from __future__ import annotations

from typing import Iterable

from conformance import results


def tally(scenarios: Iterable[results.ScenarioResult]) -> results.Tally:
    counts = {s: 0 for s in results.Status}
    weight_passed = weight_judged = 0
    must_passed = must_claimed = 0
    for sc in scenarios:
        counts[sc.status] += 1
        weight = results.LEVEL_WEIGHT[sc.level]
        if sc.status in (results.Status.PASSED, results.Status.FAILED, results.Status.FLAKY):
            weight_judged += weight
            if sc.status is results.Status.PASSED:
                weight_passed += weight
        if sc.level is results.Level.MUST and sc.status not in (results.Status.NOT_CLAIMED, results.Status.NOT_APPLICABLE):
            must_claimed += 1
            must_passed += sc.status is results.Status.PASSED
    return results.Tally(
        passed=counts[results.Status.PASSED],
        failed=counts[results.Status.FAILED],
        not_claimed=counts[results.Status.NOT_CLAIMED],
        error=counts[results.Status.ERROR],
        flaky=counts[results.Status.FLAKY],
        not_applicable=counts[results.Status.NOT_APPLICABLE],
        score=(weight_passed / weight_judged) if weight_judged else None,
        must_passed=must_passed,
        must_claimed=must_claimed,
    )


def by_suite(run: results.RunResult) -> dict[str, results.Tally]:
    suites: dict[str, list[results.ScenarioResult]] = {}
    for sc in run.scenarios:
        suites.setdefault(sc.suite, []).append(sc)
    return {name: tally(items) for name, items in sorted(suites.items())}


def missing(run: results.RunResult) -> int:
    """Selected scenario runs with no verdict (0 when the run did not record what it selected);
    with `--repeat`, every attempt counts."""
    return max(0, run.metadata.selected - sum(len(sc.attempts) or 1 for sc in run.scenarios))


def certified(run: results.RunResult) -> bool:
    """The run ran to the end with a verdict for every scenario it selected, every claimed MUST
    scenario passed (an error is not a pass, nor is FLAKY), and at least one was judged.

    An interrupted run, an incomplete one, an empty one, or one where nothing was claimed, is never
    certified.
    """
    if run.metadata.interrupted or missing(run):
        return False
    overall = tally(run.scenarios)
    return overall.must_claimed > 0 and overall.must_passed == overall.must_claimed
