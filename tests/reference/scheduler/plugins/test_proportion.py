"""proportion on in-memory snapshots: a queue that is not Open allocates nothing.

Upstream: pkg/scheduler/plugins/proportion/proportion.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import Case, run_case

CASES = [
    Case(
        "a closed queue allocates nothing",
        nodes=[node("n0")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1)],
        queues=[queue(state="Closed")],
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)
