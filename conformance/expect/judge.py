"""Judging: a predicate over a window (eventually / never / throughout), or a check of the timeline.

Verdicts come from watching: each change the recorder applies wakes the judge, which re-evaluates
the predicate on a consistent snapshot. Nothing polls the API.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from conformance import results
from conformance.expect import predicates, select
from conformance.observe import recorder, summaries
from conformance.scenario import models


def over_window(rec: recorder.Recorder, predicate: models.Predicate, mode: str, window_s: float, label: str) -> results.Check:
    """`within`: holds at some moment of the window (ends early when it does); `never`: holds at no
    moment; `throughout`: holds at every moment. Moments are the observed states."""
    expected = predicates.expected_text(predicate)
    expected = {"within": f"within {window_s:g}s: {expected}", "never": f"never within {window_s:g}s: {expected}", "throughout": f"throughout {window_s:g}s: {expected}"}[mode]
    deadline = rec.now() + window_s
    seen = -1
    with rec.cond:
        while True:
            if rec.version != seen:
                seen = rec.version
                outcome = predicates.evaluate(predicate, rec.view())
                if mode == "within" and outcome.holds:
                    return results.Check(label, True, expected, outcome.observed, rec.now())
                if mode == "never" and outcome.holds:
                    return results.Check(label, False, expected, f"held at {rec.now():.1f}s: {outcome.observed}", rec.now())
                if mode == "throughout" and not outcome.holds:
                    return results.Check(label, False, expected, f"broke at {rec.now():.1f}s: {outcome.observed}", rec.now())
            remaining = deadline - rec.now()
            if remaining <= 0:
                passed = mode != "within"
                prefix = "" if passed else f"not by {window_s:g}s: "
                return results.Check(label, passed, expected, prefix + outcome.observed, rec.now())
            rec.cond.wait(remaining)


def expectation(rec: recorder.Recorder, exp: models.Expectation, time_scale: float) -> results.Check:
    if exp.mode == "timeline":
        return timeline_check(rec, exp)
    assert exp.predicate is not None
    return over_window(rec, exp.predicate, exp.mode, exp.window_s * time_scale, exp.label())


def _first_time(states: Iterator[recorder.View], predicate: models.Predicate) -> tuple[float | None, str]:
    last = "never observed"
    for view in states:
        outcome = predicates.evaluate(predicate, view)
        last = outcome.observed
        if outcome.holds:
            return view.t_s, outcome.observed
    return None, last


def timeline_check(rec: recorder.Recorder, exp: models.Expectation) -> results.Check:
    spec = exp.timeline_spec
    if exp.timeline_kind == "order":
        first = models.Predicate(*_single(spec["first"]))
        then = models.Predicate(*_single(spec["then"]))
        t_first, seen_first = _first_time(rec.history(), first)
        t_then, seen_then = _first_time(rec.history(), then)
        expected = f"{predicates.expected_text(first)} no later than {predicates.expected_text(then)}"
        if t_then is None:
            return results.Check(exp.label(), False, expected, f"the second never held ({seen_then})", rec.now())
        if t_first is None or t_first > t_then:
            when = "never" if t_first is None else f"first at {t_first:.1f}s"
            return results.Check(exp.label(), False, expected, f"second held at {t_then:.1f}s; first {when} ({seen_first})", rec.now())
        return results.Check(exp.label(), True, expected, f"first at {t_first:.1f}s, second at {t_then:.1f}s", rec.now())
    ref = spec["object"]
    phases: list[str] = []
    for view in rec.history():
        obj = select.resolve(view, ref)
        phase = summaries.phase_of(ref["kind"], obj) if obj is not None else None
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
    wanted = list(spec["phases"])
    remaining = iter(phases)
    ok = all(any(p == w for p in remaining) for w in wanted)
    return results.Check(exp.label(), ok, f"{select.describe_ref(ref)} goes through {' -> '.join(wanted)}", " -> ".join(phases) or "no phase observed", rec.now())


def _single(doc: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    [(kind, spec)] = [(k, v) for k, v in doc.items() if k in models.PREDICATE_KINDS]
    return kind, spec
