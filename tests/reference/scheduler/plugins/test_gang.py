"""gang on in-memory snapshots: a job's pods are bound only when minAvailable of them can be,
pods already running count toward it, and a PodGroup left unbound says why in Volcano's words.

Upstream: pkg/scheduler/plugins/gang/gang.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import node, pod, podgroup
from tests.reference.scheduler_harness import Case, run_case

NO_GANG_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}]
- plugins: [{name: predicates}, {name: proportion}]
"""


CASES = [
    Case(
        "gang fits: every pod bound, PodGroup Running",
        nodes=[node("n0"), node("n1")],
        pods=[pod("a-0", "a", "3"), pod("a-1", "a", "3")],
        podgroups=[podgroup("a", 2)],
        binds={"a-0": "n0", "a-1": "n1"},
        phases={"a": "Inqueue"},  # bound but not yet Running: the phase follows observed pods
        conditions={"a": ("Scheduled", "tasks in gang are ready to be scheduled", "")},
    ),
    Case(
        "partial gang: nothing bound, Unschedulable with Volcano's message",
        nodes=[node("n0", "3"), node("n1", "3")],
        pods=[pod(f"a-{i}", "a", "2") for i in range(3)],
        podgroups=[podgroup("a", 3)],
        binds={},
        phases={"a": "Inqueue"},
        conditions={"a": ("Unschedulable", "NotEnoughResources", "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable")},
    ),
    Case(
        "without gang the same job is partly bound",
        nodes=[node("n0", "3"), node("n1", "3")],
        pods=[pod(f"a-{i}", "a", "2") for i in range(3)],
        podgroups=[podgroup("a", 3)],
        conf=NO_GANG_CONF,
        bind_count=2,
    ),
    Case(
        "minAvailable below replicas: every pod that fits is bound",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[pod(f"a-{i}", "a", "2") for i in range(4)],
        podgroups=[podgroup("a", 1)],
        bind_count=2,
    ),
    Case(
        "running pods count toward a gang: the rest of an elastic job is placed",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[pod("a-0", "a", "2", node_name="n0", phase="Running"), pod("a-1", "a", "2")],
        podgroups=[podgroup("a", 2, phase="Running")],
        binds={"a-1": "n1"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)
