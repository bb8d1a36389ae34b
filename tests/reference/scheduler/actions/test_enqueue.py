"""The enqueue action on in-memory snapshots: a Pending PodGroup is let in (Inqueue) before
allocate places it, and only when its queue could ever hold its minimum.

Upstream: pkg/scheduler/actions/enqueue/enqueue.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import node, pod, podgroup
from tests.reference.scheduler_harness import Case, run_case

CASES = [
    Case(
        "a Pending PodGroup is not allocated while enqueue is on",
        nodes=[node("n0")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1, phase="Pending")],
        conf="actions: \"allocate\"\ntiers: [{plugins: [{name: gang}]}]\n".replace("allocate", "enqueue, allocate"),
        binds={"a-0": "n0"},
        phases={"a": "Inqueue"},
    ),
    Case(
        "enqueue refuses a gang bigger than the queue's real capability",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[podgroup("big", 8, phase="Pending", min_cpu="8")],
        phases={"big": "Pending"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)
