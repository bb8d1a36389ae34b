"""Judging: a predicate over a window (eventually / never / throughout), or a check of the timeline.

Verdicts come from watching: each change the recorder applies wakes the judge, which re-evaluates
the predicate on a consistent snapshot. Nothing polls the API.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from conformance import results
from conformance.expect import predicates, select
from conformance.observe import recorder, summaries
from conformance.scenario import models


def over_window(rec: recorder.Recorder, predicate: models.Predicate, mode: str, window_s: float, label: str) -> results.Check:
    """`within`: holds at some moment of the window (ends early when it does); `never`: holds at no
    moment; `throughout`: holds at every moment. Moments are the observed states: the state when
    the window opens, then every recorded change in turn, however many arrived while the judge
    waited (a short-lived state counts, as it did happen). A change recorded after the window
    closed is not judged."""
    expected = predicates.expected_text(predicate)
    expected = {"within": f"within {window_s:g}s: {expected}", "never": f"never within {window_s:g}s: {expected}", "throughout": f"throughout {window_s:g}s: {expected}"}[mode]
    deadline = rec.now() + window_s
    with rec.cond:
        cursor = rec.cursor()
        first = cursor.current()
        states: Iterator[recorder.View] = iter((first,))
        while True:
            for view in states:
                if view.t_s > deadline and view is not first:
                    break
                outcome = predicates.evaluate(predicate, view)
                if mode == "within" and outcome.holds:
                    return results.Check(label, True, expected, outcome.observed, view.t_s)
                if mode == "never" and outcome.holds:
                    return results.Check(label, False, expected, f"held at {view.t_s:.1f}s: {outcome.observed}", view.t_s)
                if mode == "throughout" and not outcome.holds:
                    return results.Check(label, False, expected, f"broke at {view.t_s:.1f}s: {outcome.observed}", view.t_s)
            remaining = deadline - rec.now()
            if remaining <= 0:
                passed = mode != "within"
                prefix = "" if passed else f"not by {window_s:g}s: "
                return results.Check(label, passed, expected, prefix + outcome.observed, rec.now())
            rec.cond.wait(remaining)
            states = cursor.advance()


def expectation(rec: recorder.Recorder, exp: models.Expectation, time_scale: float, step_ends: Sequence[float] = (), step_starts: Sequence[float] = ()) -> results.Check:
    """Judge one expectation. `step_ends` are the moments each step of the scenario finished (by
    index), which anchor `never_since` and `between`; `step_starts` when each began (`between`
    reads the history from there; without them, from the end)."""
    if exp.mode == "timeline":
        return timeline_check(rec, exp)
    assert exp.predicate is not None
    if exp.mode in models.ANCHORED_MODES:
        assert exp.since_step is not None
        if exp.since_step >= len(step_ends):
            raise ValueError(f"{exp.label()}: step {exp.since_step + 1} has not run, so nothing is anchored at it")
        anchor = step_ends[exp.since_step]
        if exp.mode == "never_since":
            return never_since(rec, exp.predicate, anchor, exp.since_step, exp.label())
        assert exp.between_s is not None
        earliest, latest = (bound * time_scale for bound in exp.between_s)
        began = step_starts[exp.since_step] if exp.since_step < len(step_starts) else anchor
        return between(rec, exp.predicate, anchor, exp.since_step, earliest, latest, exp.label(), began)
    return over_window(rec, exp.predicate, exp.mode, exp.window_s * time_scale, exp.label())


def never_since(rec: recorder.Recorder, predicate: models.Predicate, anchor_s: float, step: int, label: str) -> results.Check:
    """The predicate held at no recorded moment from the end of step `step` until now."""
    expected = f"never since step {step + 1} ended (at {anchor_s:.1f}s): {predicates.expected_text(predicate)}"
    observed = "no state recorded"
    for view in rec.history(since_s=anchor_s):
        outcome = predicates.evaluate(predicate, view)
        if outcome.holds:
            return results.Check(label, False, expected, f"held at {view.t_s:.1f}s ({view.t_s - anchor_s:.1f}s after step {step + 1}): {outcome.observed}", rec.now())
        observed = outcome.observed
    return results.Check(label, True, expected, f"not once in {rec.now() - anchor_s:.1f}s; last: {observed}", rec.now())


def between(rec: recorder.Recorder, predicate: models.Predicate, anchor_s: float, step: int, earliest_s: float, latest_s: float, label: str, began_s: float | None = None) -> results.Check:
    """The predicate first held no sooner than `earliest_s` and no later than `latest_s` after
    step `step` ended (at `anchor_s`): what came before is read from the history, what is still
    to come is waited for. While the step ran (from `began_s`), a change that made the predicate
    hold counts too: on a busy machine the implementation can react to a step, and move on,
    before the kit has noted the step's end, and that reaction is judged (as too soon when
    `earliest_s` is above 0) rather than missed. A state that held already when the step began
    is no reaction to it: it counts only if it still holds when the step ends."""
    expected = f"first held between {earliest_s:g}s and {latest_s:g}s after step {step + 1} ended: {predicates.expected_text(predicate)}"
    last = "no state recorded"
    deadline = anchor_s + latest_s
    with rec.cond:
        # The history so far, then each change as it comes (the lock is held from one to the
        # other, so no change falls between them).
        if began_s is not None and began_s < anchor_s:
            held: bool | None = None  # unknown until the state when the step began is judged
            for view in rec.history(since_s=began_s):
                if view.t_s > anchor_s:
                    break
                outcome = predicates.evaluate(predicate, view)
                if outcome.holds and held is False:
                    return _first_held(label, expected, view.t_s - anchor_s, earliest_s, latest_s, outcome.observed, rec.now())
                held = outcome.holds
        for view in rec.history(since_s=anchor_s):
            outcome = predicates.evaluate(predicate, view)
            last = outcome.observed
            if outcome.holds:
                return _first_held(label, expected, view.t_s - anchor_s, earliest_s, latest_s, outcome.observed, rec.now())
        cursor = rec.cursor()
        states: Iterator[recorder.View] = iter(())
        while True:
            for view in states:
                if view.t_s > deadline:
                    break
                outcome = predicates.evaluate(predicate, view)
                last = outcome.observed
                if outcome.holds:
                    return _first_held(label, expected, view.t_s - anchor_s, earliest_s, latest_s, outcome.observed, rec.now())
            remaining = deadline - rec.now()
            if remaining <= 0:
                return results.Check(label, False, expected, f"not by {latest_s:g}s after step {step + 1}: {last}", rec.now())
            rec.cond.wait(remaining)
            states = cursor.advance()


def _first_held(label: str, expected: str, after_s: float, earliest_s: float, latest_s: float, observed: str, now: float) -> results.Check:
    if after_s < 0 and earliest_s > 0:
        return results.Check(label, False, expected, f"held already before the step ended ({-after_s:.1f}s before), too soon: {observed}", now)
    after_s = max(after_s, 0.0)
    if after_s < earliest_s:
        return results.Check(label, False, expected, f"held already {after_s:.1f}s after, too soon: {observed}", now)
    if after_s > latest_s:
        return results.Check(label, False, expected, f"first held {after_s:.1f}s after, too late: {observed}", now)
    return results.Check(label, True, expected, f"first held {after_s:.1f}s after: {observed}", now)


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
        try:
            obj = select.resolve(view, ref)
        except select.Ambiguous:
            obj = None
        phase = summaries.phase_of(ref["kind"], obj) if obj is not None else None
        if phase and (not phases or phases[-1] != phase):
            phases.append(phase)
    return _phase_history_check(exp.label(), select.describe_ref(ref), spec, phases, rec.now())


def _phase_history_check(label: str, what: str, spec: Mapping[str, Any], phases: list[str], now: float) -> results.Check:
    """`phases` in this order (others may come between; with `exactly`, none may), and none of
    `without` ever."""
    wanted = list(spec["phases"])
    remaining = iter(phases)
    in_order = all(any(p == w for p in remaining) for w in wanted)
    exact = not spec.get("exactly") or phases == wanted
    forbidden = [p for p in phases if p in (spec.get("without") or ())]
    expected = f"{what} goes through {' -> '.join(wanted)}"
    if spec.get("exactly"):
        expected += " and through nothing else"
    if spec.get("without"):
        expected += f", never {' or '.join(spec['without'])}"
    observed = " -> ".join(phases) or "no phase observed"
    if forbidden:
        observed += f" (was {', '.join(dict.fromkeys(forbidden))})"
    return results.Check(label, in_order and exact and not forbidden, expected, observed, now)


def _single(doc: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    [(kind, spec)] = [(k, v) for k, v in doc.items() if k in models.PREDICATE_KINDS]
    return kind, spec
