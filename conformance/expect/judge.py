"""Judging: a predicate over a window (eventually / never / throughout), or a check of the timeline.

Verdicts come from watching: each change the recorder applies wakes the judge, which re-evaluates
the predicate on a consistent snapshot. Nothing polls the API.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from conformance import results
from conformance.expect import clock, predicates, select
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
    if exp.mode == "between" and exp.since_time is not None:
        assert exp.between_s is not None
        earliest, latest = between_bounds(exp.between_s, time_scale)
        return between_observed_time(rec, exp.predicate, exp.since_time, earliest, latest, exp.label())
    if exp.mode in models.ANCHORED_MODES:
        assert exp.since_step is not None
        if exp.since_step >= len(step_ends):
            raise ValueError(f"{exp.label()}: step {exp.since_step + 1} has not run, so nothing is anchored at it")
        anchor = step_ends[exp.since_step]
        if exp.mode == "never_since":
            return never_since(rec, exp.predicate, anchor, exp.since_step, exp.label())
        assert exp.between_s is not None
        earliest, latest = between_bounds(exp.between_s, time_scale)
        began = step_starts[exp.since_step] if exp.since_step < len(step_starts) else anchor
        return between(rec, exp.predicate, anchor, exp.since_step, earliest, latest, exp.label(), began)
    return over_window(rec, exp.predicate, exp.mode, exp.window_s * time_scale, exp.label())


def between_bounds(between_s: tuple[float, float], time_scale: float) -> tuple[float, float]:
    """`between: [FROM, TO]` under `--time-scale`: FROM is the implementation's own time (a policy
    timeout, a TTL, a cooldown), which no slowness of the cluster stretches, so it stays as
    written; the room after it (TO - FROM) is the kit's allowance for a slow cluster, and that is
    scaled. Scaling FROM would judge a correct timer "too soon" on a stretched run."""
    earliest, latest = between_s
    return earliest, earliest + (latest - earliest) * time_scale


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


def observed_time(rec: recorder.Recorder, time_of: Mapping[str, Any]) -> tuple[float | None, str]:
    """The RFC 3339 timestamp at `time_of`'s field of its `object` (of all its `objects`: the
    earliest of them), on the recorder's time line; or None and what was seen instead. Of each
    object, the value it stated last (before it was deleted): a condition's lastTransitionTime is
    rewritten when its status turns (a pod's PodScheduled, False while it waited, then True)."""
    path = time_of["field"]
    what = select.describe_ref(time_of["object"]) if "object" in time_of else select.describe_selection(time_of["objects"])
    stated: dict[str, Any] = {}
    seen = f"{what}: never observed"
    for view in rec.history():
        try:
            found = [select.resolve(view, time_of["object"])] if "object" in time_of else select.objects(view, time_of["objects"])
        except select.Ambiguous as err:
            seen = str(err)
            continue
        for obj in found:
            if obj is None:
                continue
            value = select.field(obj, path)
            if select.missing(value):
                seen = f"{what}: no {path} in {obj['metadata']['name']}"
                continue
            stated[obj["metadata"]["name"]] = value
    earliest: tuple[float, str] | None = None
    for name, value in stated.items():
        epoch = clock.epoch_of(value)
        if epoch is None:
            return None, f"{what}: {path} of {name} is {value!r}, not an RFC 3339 time"
        at = rec.wall_to_t(epoch)
        if earliest is None or at < earliest[0]:
            earliest = (at, f"{path} {value} of {name}")
    return (earliest[0], earliest[1]) if earliest is not None else (None, seen)


def between_observed_time(rec: recorder.Recorder, predicate: models.Predicate | None, time_of: Mapping[str, Any], earliest_s: float, latest_s: float, label: str) -> results.Check:
    """`between` anchored at a moment an object states (a condition's lastTransitionTime): the
    implementation's own clock starts there, not at a step of the kit. A moment not stated yet
    is waited for, up to TO. The API writes whole seconds, so the anchor is the start of its
    second and FROM is judged to within one second."""
    assert predicate is not None
    of = select.describe_ref(time_of["object"]) if "object" in time_of else f"the first of {select.describe_selection(time_of['objects'])}"
    what = f"the time in {time_of['field']} of {of}"
    deadline = rec.now() + latest_s
    with rec.cond:
        anchor_s, seen = observed_time(rec, time_of)
        while anchor_s is None:
            remaining = deadline - rec.now()
            if remaining <= 0:
                expected = f"first held between {earliest_s:g}s and {latest_s:g}s after {what}: {predicates.expected_text(predicate)}"
                return results.Check(label, False, expected, f"no such time to count from within {latest_s:g}s: {seen}", rec.now())
            version = rec.version
            rec.cond.wait(remaining)
            if rec.version != version:
                anchor_s, seen = observed_time(rec, time_of)
    return between(rec, predicate, anchor_s, what, earliest_s, latest_s, label)


def between(rec: recorder.Recorder, predicate: models.Predicate, anchor_s: float, step: int | str, earliest_s: float, latest_s: float, label: str, began_s: float | None = None) -> results.Check:
    """The predicate first held no sooner than `earliest_s` and no later than `latest_s` after
    step `step` ended (at `anchor_s`): what came before is read from the history, what is still
    to come is waited for. While the step ran (from `began_s`), a change that made the predicate
    hold counts too: on a busy machine the implementation can react to a step, and move on,
    before the kit has noted the step's end, and that reaction is judged (as too soon when
    `earliest_s` is above 0) rather than missed. A state that held already when the step began
    is no reaction to it: it counts only if it still holds when the step ends."""
    anchor = f"step {step + 1} ended" if isinstance(step, int) else step
    expected = f"first held between {earliest_s:g}s and {latest_s:g}s after {anchor}: {predicates.expected_text(predicate)}"
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
                    return _first_held(label, expected, view.t_s - anchor_s, earliest_s, latest_s, outcome.observed, rec.now(), anchor)
                held = outcome.holds
        for view in rec.history(since_s=anchor_s):
            outcome = predicates.evaluate(predicate, view)
            last = outcome.observed
            if outcome.holds:
                return _first_held(label, expected, view.t_s - anchor_s, earliest_s, latest_s, outcome.observed, rec.now(), anchor)
        cursor = rec.cursor()
        states: Iterator[recorder.View] = iter(())
        while True:
            for view in states:
                if view.t_s > deadline:
                    break
                outcome = predicates.evaluate(predicate, view)
                last = outcome.observed
                if outcome.holds:
                    return _first_held(label, expected, view.t_s - anchor_s, earliest_s, latest_s, outcome.observed, rec.now(), anchor)
            remaining = deadline - rec.now()
            if remaining <= 0:
                return results.Check(label, False, expected, f"not by {latest_s:g}s after {anchor}: {last}", rec.now())
            rec.cond.wait(remaining)
            states = cursor.advance()


def _first_held(label: str, expected: str, after_s: float, earliest_s: float, latest_s: float, observed: str, now: float, anchor: str) -> results.Check:
    if after_s < 0 and earliest_s > 0:
        return results.Check(label, False, expected, f"held already before {anchor} ({-after_s:.1f}s before), too soon: {observed}", now)
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
    """`phases` in this order (others may come between; with `exactly`, none may), none of
    `without` ever, and none of `never_after` once the last of `phases` was reached."""
    wanted = list(spec["phases"])
    reached = _reached_in_order(phases, wanted)
    exact = not spec.get("exactly") or phases == wanted
    forbidden = [p for p in phases if p in (spec.get("without") or ())]
    # What came after the moment the order was complete ("once Completed, never Running again").
    later = [p for p in phases[reached + 1:] if p in (spec.get("never_after") or ())] if reached is not None else []
    expected = f"{what} goes through {' -> '.join(wanted)}"
    if spec.get("exactly"):
        expected += " and through nothing else"
    if spec.get("without"):
        expected += f", never {' or '.join(spec['without'])}"
    if spec.get("never_after"):
        expected += f", and after {wanted[-1]} never {' or '.join(spec['never_after'])}"
    observed = " -> ".join(phases) or "no phase observed"
    if forbidden:
        observed += f" (was {', '.join(dict.fromkeys(forbidden))})"
    if later:
        observed += f" (after {wanted[-1]}: {', '.join(dict.fromkeys(later))})"
    return results.Check(label, reached is not None and exact and not forbidden and not later, expected, observed, now)


def _reached_in_order(phases: list[str], wanted: list[str]) -> int | None:
    """The index in `phases` where the last of `wanted` was first reached with all of `wanted`
    before it in order (others may come between); None when they never were."""
    at = -1
    for phase in wanted:
        at = next((i for i in range(at + 1, len(phases)) if phases[i] == phase), -1)
        if at < 0:
            return None
    return at


def _single(doc: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    [(kind, spec)] = [(k, v) for k, v in doc.items() if k in models.PREDICATE_KINDS]
    return kind, spec
