"""overcommit on in-memory snapshots: how much more than the cluster holds may be enqueued, and
what an Inqueue job holds of it (not its gated pods' share).

Upstream: pkg/scheduler/plugins/overcommit/overcommit.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import gated, node, pod, podgroup
from tests.reference.scheduler_harness import Case, run_case

OVERCOMMIT_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: overcommit}, {name: predicates}]
"""
ENQUEUE_CONF = """
actions: "enqueue"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}]
"""


CASES = [
    Case(
        "overcommit lets 1.2x the cluster be enqueued and no more",
        nodes=[node("n0", "10")],
        pods=[],
        podgroups=[podgroup("a", 1, "Pending", "7"), podgroup("b", 1, "Pending", "5"), podgroup("c", 1, "Pending", "5")],
        conf=OVERCOMMIT_CONF,
        phases={"a": "Inqueue", "b": "Inqueue", "c": "Pending"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)


# Scheduling gates (issue 19): a gated pod holds no room of its Inqueue job's minimum.
GATED_CASES = [
    Case(
        "an Inqueue job's gated pods hold no overcommit room: the next job is enqueued",
        nodes=[node("n0", "4")],
        pods=[gated(pod(f"g-{i}", "g")) for i in range(4)],
        podgroups=[podgroup("g", 4, min_cpu="4"), podgroup("next", 2, phase="Pending", min_cpu="2")],
        conf=ENQUEUE_CONF,
        phases={"next": "Inqueue"},
    ),
    Case(
        "ungated, the same Inqueue job holds its minimum: the next job waits",
        nodes=[node("n0", "4")],
        pods=[pod(f"g-{i}", "g") for i in range(4)],
        podgroups=[podgroup("g", 4, min_cpu="4"), podgroup("next", 2, phase="Pending", min_cpu="2")],
        conf=ENQUEUE_CONF,
        phases={"next": "Pending"},
    ),
]


@pytest.mark.parametrize("case", GATED_CASES, ids=[c.name for c in GATED_CASES])
def test_cycle(case: Case) -> None:
    run_case(case)
