"""pdb on in-memory snapshots: a PodDisruptionBudget with no allowance keeps its pods from being
victims, and an allowance is shared by the pods the budget selects.

Upstream: pkg/scheduler/plugins/pdb/pdb.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import budget, node, pod, podgroup, running, with_meta
from tests.reference.scheduler_harness import SHUFFLE_CONF, Case, run_case

PDB_PREEMPT_CONF = """
actions: "allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: pdb}]
- plugins: [{name: predicates}]
"""

CASES = [
    Case(
        "a disruption budget with no allowance keeps its pods; the unprotected one is the victim",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[*(with_meta(running(f"kept-{i}", "kept", "n0"), {"app": "kept"}) for i in range(2)), *(with_meta(running(f"free-{i}", "free", "n1"), {"app": "free"}) for i in range(2)), pod("high-0", "high")],
        podgroups=[podgroup("kept", 1, phase="Running", priority="low"), podgroup("free", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        pdbs=[budget("kept", "kept", 0)],
        conf=PDB_PREEMPT_CONF,
        evictions=["free-0"],
        binds={},
    ),
    Case(
        "a budget's allowance is shared: of two pods it selects, one may go",
        nodes=[node("n0", "4")],
        pods=[with_meta(running(f"kept-{i}", "kept", "n0"), {"app": "kept"}) for i in range(2)],
        podgroups=[podgroup("kept", 1, phase="Running")],
        pdbs=[budget("kept", "kept", 1)],
        conf=SHUFFLE_CONF,
        evictions=["kept-0"],
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cycle(case: Case) -> None:
    run_case(case)
