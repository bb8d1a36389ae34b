"""Predicates: statements about the cluster at one moment, each giving a verdict and what it saw."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from typing import Any, Callable, Mapping

from conformance.cluster import resources
from conformance.expect import clock, endpoints, select
from conformance.expect.counts import count_ok, count_text
from conformance.observe import recorder, summaries
from conformance.scenario import durations, models

NODE = resources.lookup("Node")
EVENT = resources.lookup("Event")


@dataclasses.dataclass(frozen=True)
class Outcome:
    holds: bool
    observed: str


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def matching_pods(view: recorder.View, spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found = select.pods(view, spec.get("select"))
    if "phase" in spec:
        found = [p for p in found if _phase(p) == spec["phase"]]
    if "bound" in spec:
        found = [p for p in found if bool((p.get("spec") or {}).get("nodeName")) == spec["bound"]]
    return found


def _pods(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    found = matching_pods(view, spec)
    everything = select.pods(view, spec.get("select"))
    by_phase = Counter(_phase(p) for p in everything)
    bound = sum(1 for p in everything if (p.get("spec") or {}).get("nodeName"))
    detail = ", ".join(f"{k} {v}" for k, v in sorted(by_phase.items())) or "none"
    return Outcome(count_ok(spec["count"], len(found)), f"{len(found)} matching; selected pods: {detail}; bound {bound}")


def _phase_pred(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    ref = spec["object"]
    obj = select.resolve(view, ref)
    if obj is None:
        return Outcome(False, f"{select.describe_ref(ref)} does not exist")
    phase = summaries.phase_of(ref["kind"], obj)
    wanted = [spec["is"]] if "is" in spec else list(spec["in"])
    return Outcome(phase in wanted, f"{select.describe_ref(ref)} is {phase or 'without a phase'}")


def _condition(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    ref = spec["object"]
    obj = select.resolve(view, ref)
    if obj is None:
        return Outcome(False, f"{select.describe_ref(ref)} does not exist")
    conditions = [c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == spec["type"]]
    if not conditions:
        types = [c.get("type") for c in (obj.get("status") or {}).get("conditions") or []]
        return Outcome(False, f"{select.describe_ref(ref)} has no {spec['type']} condition (has {types})")
    cond = conditions[-1]
    ok = (
        ("status" not in spec or cond.get("status") == spec["status"])
        and ("reason" not in spec or cond.get("reason") == spec["reason"])
        and ("message" not in spec or re.search(spec["message"], cond.get("message") or "") is not None)
    )
    shown = {k: cond.get(k) for k in ("type", "status", "reason", "message")}
    return Outcome(ok, f"{select.describe_ref(ref)} condition {json.dumps(shown)}")


def _event_targets(view: recorder.View, ref: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The objects whose events count: the one a reference names, or every object a selection
    (name_matches, labels) matches: an event about any of them will do."""
    if any(key in ref for key in select.SELECTION_KEYS):
        return select.objects(view, ref)
    target = select.resolve(view, ref)
    return [target] if target is not None else []


def _event(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    targets = _event_targets(view, spec["object"]) if "object" in spec else None
    if targets == []:
        return Outcome(False, f"{select.describe_ref(spec['object'])} does not exist")
    uids = {t["metadata"].get("uid") for t in targets or []} - {None}
    names = {t["metadata"]["name"] for t in targets or []}
    found = []
    reasons: Counter[str | None] = Counter()
    for event in view.of(EVENT).values():
        involved = event.get("involvedObject") or event.get("regarding") or {}
        if targets is not None and involved.get("uid") not in uids and involved.get("name") not in names:
            continue
        reasons[event.get("reason")] += 1
        if event.get("reason") != spec["reason"]:
            continue
        if "type" in spec and event.get("type") != spec["type"]:
            continue
        if "message" in spec and re.search(spec["message"], event.get("message") or "") is None:
            continue
        found.append(event)
    count = spec.get("count", {"min": 1})
    messages = [e.get("message") for e in found][:3]
    seen = sum(occurrences(e) for e in found)
    return Outcome(count_ok(count, seen), f"{seen} matching occurrences in {len(found)} Event objects {messages}; reasons seen: {dict(reasons)}")


def occurrences(event: Mapping[str, Any]) -> int:
    """How many times an Event object says it happened. Kubernetes' event recorder (client-go's
    EventCorrelator, used by Volcano) folds repeats of the same reason and message on the same
    object into one Event and raises its `count` (core/v1) or `series.count` (events.k8s.io), so
    two evictions announced alike are one object with count 2, not two objects."""
    series = (event.get("series") or {}).get("count")
    for value in (event.get("count"), series, event.get("deprecatedCount")):
        if isinstance(value, int) and value > 0:
            return value
    return 1


def _object(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    ref = spec["object"]
    obj = select.resolve(view, ref)
    exists = spec.get("exists", True)
    if obj is None:
        return Outcome(not exists, f"{select.describe_ref(ref)} does not exist")
    if not exists:
        return Outcome(False, f"{select.describe_ref(ref)} exists ({obj['metadata']['name']})" if "name" not in ref else f"{select.describe_ref(ref)} exists")
    failures = field_failures(view, obj, spec.get("fields") or {})
    if failures:
        return Outcome(False, f"{select.describe_ref(ref)}: " + "; ".join(failures))
    return Outcome(True, f"{select.describe_ref(ref)} has every field")


def field_failures(view: recorder.View, obj: Mapping[str, Any], fields: Mapping[str, Any]) -> list[str]:
    """`path = value` for each field of `obj` that does not match what `fields` wants."""
    failures = []
    for path, want in fields.items():
        got = select.field(obj, path)
        if not _field_ok(view, obj, got, want):
            shown = "(absent)" if select.missing(got) else json.dumps(got, default=str)[:200]
            failures.append(f"{path} = {shown}{_remembered_note(view, obj, want)}")
    return failures


def _remembered_note(view: recorder.View, obj: Mapping[str, Any], want: Any) -> str:
    """For a comparison with a remembered value, what was remembered (the reader needs both)."""
    if not isinstance(want, Mapping):
        return ""
    name = want.get("same_as", want.get("differs_from"))
    if name is None:
        return ""
    found, value = _remembered(view, name, obj)
    return f" (remembered as {name}: {json.dumps(value, default=str)[:200] if found else 'nothing for this object'})"


def _remembered(view: recorder.View, name: str, obj: Mapping[str, Any]) -> tuple[bool, Any]:
    """The value a `remember` step noted under `name` for this object: the one value of a single
    object, or, from a selection, the value noted for the object of the same name."""
    memory = view.memory.get(name)
    if memory is None:
        return False, None
    if memory.per_name is None:
        return True, memory.single
    own = str((obj.get("metadata") or {}).get("name"))
    return (own in memory.per_name), memory.per_name.get(own)


def _json_of(got: Any) -> tuple[bool, Any]:
    if not isinstance(got, str):
        return False, None
    try:
        return True, json.loads(got)
    except ValueError:
        return False, None


def json_contains(have: Any, want: Any) -> bool:
    """`want` is part of `have`: each key of a mapping present with a value that contains the wanted
    one; anything else (lists, strings, numbers) equal."""
    if isinstance(want, Mapping):
        return isinstance(have, Mapping) and all(k in have and json_contains(have[k], v) for k, v in want.items())
    return bool(have == want)


def _field_ok(view: recorder.View, obj: Mapping[str, Any], got: Any, want: Any) -> bool:
    if isinstance(want, Mapping):
        if "exists" in want:
            return bool(select.missing(got) != want["exists"])
        if "absent_or" in want:
            # A zero an API leaves out (omitempty) is the same answer as a zero written out.
            return select.missing(got) or _equal(got, want["absent_or"])
        if select.missing(got):
            return False
        if "matches" in want:
            return re.search(want["matches"], got if isinstance(got, str) else json.dumps(got)) is not None
        if "contains" in want:
            return want["contains"] in got if isinstance(got, (list, str)) else False
        if "json" in want or "json_contains" in want:
            parsed, value = _json_of(got)
            return parsed and (value == want["json"] if "json" in want else json_contains(value, want["json_contains"]))
        if "past_boundary" in want:
            return clock.past_boundary(got, durations.parse(want["past_boundary"]["every"]), durations.parse(want["past_boundary"]["at_most"]))
        if "same_as" in want or "differs_from" in want:
            found, value = _remembered(view, want.get("same_as", want.get("differs_from")), obj)
            same = found and _equal(got, value)
            return same if "same_as" in want else not same
    if select.missing(got):
        return False
    return _equal(got, want)


def _equal(got: Any, want: Any) -> bool:
    return bool(got == want or (not isinstance(got, (dict, list)) and str(got) == str(want)))


def _every(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    """At least `min` objects selected (default 1), at most `max` when given, and every one has
    every field."""
    if "objects" in spec:
        found = select.objects(view, spec["objects"])
    else:
        found = matching_pods(view, spec)
    minimum = spec.get("min", 1)
    if len(found) < minimum:
        return Outcome(False, f"{len(found)} selected, at least {minimum} wanted: {[o['metadata']['name'] for o in found][:10]}")
    if "max" in spec and len(found) > spec["max"]:
        return Outcome(False, f"{len(found)} selected, at most {spec['max']} wanted: {[o['metadata']['name'] for o in found][:10]}")
    failing = {o["metadata"]["name"]: field_failures(view, o, spec.get("fields") or {}) for o in found}
    failing = {name: failures for name, failures in failing.items() if failures}
    if failing:
        shown = "; ".join(f"{name}: {', '.join(failures)}" for name, failures in list(failing.items())[:5])
        return Outcome(False, f"{len(failing)} of {len(found)} selected do not: {shown}")
    return Outcome(True, f"all {len(found)} selected have every field: {[o['metadata']['name'] for o in found][:10]}")


def _placement(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    bound = [p for p in select.pods(view, spec["select"]) if (p.get("spec") or {}).get("nodeName")]
    placed = {p["metadata"]["name"]: p["spec"]["nodeName"] for p in bound}
    if len(bound) < spec.get("min_pods", 1):
        return Outcome(False, f"only {len(bound)} pods bound: {placed}")
    nodes_used = list(placed.values())
    rule = spec["rule"]
    if rule == "same-node":
        return Outcome(len(set(nodes_used)) == 1, f"placements {placed}")
    if rule == "distinct-nodes":
        return Outcome(len(set(nodes_used)) == len(nodes_used), f"placements {placed}")
    label = spec.get("label", "")
    values = {}
    for pod_name, node_name in placed.items():
        node = view.named(NODE, node_name)
        values[pod_name] = ((node or {}).get("metadata", {}).get("labels") or {}).get(label)
    return Outcome(len(set(values.values())) == 1 and None not in values.values(), f"{label} of each pod's node: {values}")


def _ratio(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    num = len(matching_pods(view, spec["numerator"]))
    den = len(matching_pods(view, spec["denominator"]))
    if den == 0:
        return Outcome(False, f"numerator {num}, denominator 0")
    value = num / den
    return Outcome(abs(value - spec["value"]) <= spec["tolerance"], f"{num}/{den} = {value:.3f}")


def _endpoints(view: recorder.View, spec: Mapping[str, Any]) -> Outcome:
    return Outcome(*endpoints.judge(view, spec))


EVALUATORS: dict[str, Callable[[recorder.View, Mapping[str, Any]], Outcome]] = {
    "pods": _pods,
    "phase": _phase_pred,
    "condition": _condition,
    "event": _event,
    "object": _object,
    "placement": _placement,
    "endpoints": _endpoints,
    "ratio": _ratio,
    "every": _every,
}


def evaluate(predicate: models.Predicate, view: recorder.View) -> Outcome:
    """The predicate's verdict on one state. A reference that names several objects at once
    (select.Ambiguous) does not hold, and says which matched."""
    try:
        return EVALUATORS[predicate.kind](view, predicate.spec)
    except select.Ambiguous as err:
        return Outcome(False, str(err))


def expected_text(predicate: models.Predicate) -> str:
    spec = predicate.spec
    if predicate.kind == "pods":
        what = " ".join(filter(None, [spec.get("phase"), "bound" if spec.get("bound") is True else "unbound" if spec.get("bound") is False else ""]))
        return f"{count_text(spec['count'])} {what} pods matching {json.dumps(spec.get('select') or {})}".replace("  ", " ")
    if predicate.kind == "phase":
        wanted = spec.get("is") or " or ".join(spec["in"])
        return f"{select.describe_ref(spec['object'])} in phase {wanted}"
    if predicate.kind == "endpoints":
        return endpoints.expected_text(spec)
    if predicate.kind == "every":
        what = f"pods matching {json.dumps(spec.get('select') or {})}" if "objects" not in spec else select.describe_selection(spec["objects"]) + " objects"
        return f"at least {spec.get('min', 1)} {what}, each with {json.dumps(spec.get('fields') or {}, sort_keys=True)}"
    return f"{predicate.kind} {json.dumps(dict(spec), sort_keys=True)}"
