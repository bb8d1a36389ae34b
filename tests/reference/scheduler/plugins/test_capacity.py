"""capacity on in-memory snapshots: deserved, capability, reclaim down to deserved, guarantees,
closed queues, enqueue, and the queue tree of spec.parent. A case may say which events must be
recorded.

Upstream: pkg/scheduler/plugins/capacity/capacity.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import node, pod, podgroup, queue, running
from tests.reference.scheduler_harness import Case, run_case

CAPACITY_CONF = """
actions: "enqueue, allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: capacity}]
"""
HIERARCHY_CAPACITY_CONF = CAPACITY_CONF.replace("{name: capacity}", "{name: capacity, enableHierarchy: true}")


CASES = [
    Case(
        "capacity: an idle cluster lets a queue run beyond its deserved share",
        nodes=[node("n0", "4")],
        pods=[pod(f"a-{i}", "a") for i in range(4)],
        podgroups=[podgroup("a", 1, queue="qa")],
        queues=[queue("qa", deserved={"cpu": "1"})],
        conf=CAPACITY_CONF,
        bind_count=4,
    ),
    Case(
        "capacity: a queue never runs beyond its capability",
        nodes=[node("n0", "4")],
        pods=[pod(f"a-{i}", "a") for i in range(4)],
        podgroups=[podgroup("a", 1, queue="qa")],
        queues=[queue("qa", deserved={"cpu": "1"}, capability={"cpu": "2"})],
        conf=CAPACITY_CONF,
        bind_count=2,
    ),
    Case(
        "capacity: reclaim takes from a queue above its deserved share down to it",
        nodes=[node("n0", "4")],
        pods=[running(f"a-{i}", "a") for i in range(4)] + [pod("b-0", "b"), pod("b-1", "b"), pod("b-2", "b")],
        podgroups=[podgroup("a", 1, phase="Running", queue="qa"), podgroup("b", 3, queue="qb")],
        queues=[queue("qa", deserved={"cpu": "2"}), queue("qb", deserved={"cpu": "2"})],
        conf=CAPACITY_CONF,
        binds={},
        evictions=["a-2", "a-1"],
    ),
    Case(
        "capacity: no reclaim once the reclaimer would pass its deserved share",
        nodes=[node("n0", "4")],
        pods=[running("a-0", "a"), running("a-1", "a"), running("a-2", "a"), running("b-0", "b"), pod("b2-0", "b2")],
        podgroups=[podgroup("a", 1, phase="Running", queue="qa"), podgroup("b", 1, phase="Running", queue="qb"), podgroup("b2", 1, queue="qb")],
        queues=[queue("qa", deserved={"cpu": "3"}), queue("qb", deserved={"cpu": "1"})],
        conf=CAPACITY_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "capacity: never below a queue's guarantee",
        nodes=[node("n0", "4")],
        pods=[running(f"a-{i}", "a") for i in range(4)] + [pod("b-0", "b")],
        podgroups=[podgroup("a", 1, phase="Running", queue="qa"), podgroup("b", 1, queue="qb")],
        queues=[queue("qa", deserved={"cpu": "1"}, guarantee={"cpu": "4"}), queue("qb", deserved={"cpu": "2"})],
        conf=CAPACITY_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "capacity: a closed queue allocates nothing",
        nodes=[node("n0", "4")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1, queue="qa")],
        queues=[queue("qa", deserved={"cpu": "1"}, state="Closed")],
        conf=CAPACITY_CONF,
        binds={},
    ),
    Case(
        "capacity: enqueue refuses a job whose minimum passes the queue's capability",
        nodes=[node("n0", "8")],
        pods=[],
        podgroups=[podgroup("a", 3, phase="Pending", min_cpu="3", queue="qa")],
        queues=[queue("qa", capability={"cpu": "2"})],
        conf=CAPACITY_CONF,
        phases={"a": "Pending"},
        events=[("a", "Unschedulable", "queue resource quota insufficient: insufficient cpu")],
    ),
    Case(
        "capacity hierarchy: a leaf inherits its parent's capability",
        nodes=[node("n0", "8")],
        pods=[pod(f"a-{i}", "a") for i in range(4)],
        podgroups=[podgroup("a", 1, queue="leaf")],
        queues=[queue("root"), queue("mid", capability={"cpu": "2"}), queue("leaf", parent="mid")],
        conf=HIERARCHY_CAPACITY_CONF,
        bind_count=2,
    ),
    Case(
        "capacity hierarchy: nothing is scheduled while children deserve more than their parent",
        nodes=[node("n0", "8")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1, queue="leaf")],
        queues=[queue("root"), queue("mid", deserved={"cpu": "1"}), queue("leaf", parent="mid", deserved={"cpu": "2"})],
        conf=HIERARCHY_CAPACITY_CONF,
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)
