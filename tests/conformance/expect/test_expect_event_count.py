"""The `event` predicate counts occurrences, not Event objects: Kubernetes folds repeats of one
event into a single object with a `count` (client-go's EventCorrelator, which Volcano uses)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.cluster import resources
from conformance.expect import predicates
from conformance.observe import recorder
from conformance.scenario import models

PODGROUP = resources.lookup("PodGroup")
EVENT = resources.lookup("Event")


def state(*events: dict[str, Any]) -> recorder.View:
    group = {"metadata": {"name": "low-1234", "namespace": "ns", "uid": "u1", "ownerReferences": [{"kind": "Job", "name": "low"}]}}
    table: dict[resources.Kind, dict[tuple[str, str], dict[str, Any]]] = {PODGROUP: {("ns", "low-1234"): group}}
    for i, extra in enumerate(events):
        event = {"metadata": {"name": f"e{i}", "namespace": "ns"}, "involvedObject": {"kind": "PodGroup", "name": "low-1234", "uid": "u1"}, "reason": "Evict", "message": "preempt", **extra}
        table.setdefault(EVENT, {})[("ns", f"e{i}")] = event
    return recorder.View(table, 0.0)


EVICTED_TWICE = models.Predicate("event", {"object": {"kind": "PodGroup", "job": "low"}, "reason": "Evict", "message": "preempt", "count": {"min": 2}})


@pytest.mark.parametrize(
    ("view", "holds"),
    [
        (state({"count": 2}), True),  # Volcano: one object, count 2
        (state({}, {}), True),  # two objects, no count (the reference's recorder)
        (state({"count": 1}, {"count": 1}), True),
        (state({"series": {"count": 2}}), True),  # events.k8s.io shape
        (state({"count": 1}), False),
        (state({}), False),
    ],
)
def test_event_count_sums_occurrences(view: recorder.View, holds: bool) -> None:
    outcome = predicates.evaluate(EVICTED_TWICE, view)
    assert outcome.holds is holds, outcome.observed


def test_exact_count_is_of_occurrences() -> None:
    once = models.Predicate("event", {"object": {"kind": "PodGroup", "job": "low"}, "reason": "Evict", "count": 1})
    assert predicates.evaluate(once, state({"count": 1})).holds
    assert not predicates.evaluate(once, state({"count": 3})).holds


def test_observed_says_occurrences_and_objects() -> None:
    outcome = predicates.evaluate(EVICTED_TWICE, state({"count": 2}))
    assert "2 matching occurrences in 1 Event objects" in outcome.observed
