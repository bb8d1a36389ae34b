"""binpack on in-memory snapshots: the fuller node scores higher.

Upstream: pkg/scheduler/plugins/binpack/binpack.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import node, pod, podgroup
from tests.reference.scheduler_harness import Case, run_case

BINPACK_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: binpack}]
"""


CASES = [
    Case(
        "binpack: the fuller node wins over the first by name",
        nodes=[node("n0", "4"), node("n1", "4")],
        pods=[pod("x-0", "x", "2", node_name="n1", phase="Running"), pod("a-0", "a", "1")],
        podgroups=[podgroup("x", 1, phase="Running"), podgroup("a", 1)],
        conf=BINPACK_CONF,
        binds={"a-0": "n1"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)
