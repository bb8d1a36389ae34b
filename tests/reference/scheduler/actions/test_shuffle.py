"""The shuffle action on in-memory snapshots: it evicts the running pods the plugins name as
victims (here pdb's: those no budget protects).

Upstream: pkg/scheduler/actions/shuffle/shuffle.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import budget, node, podgroup, running, with_meta
from tests.reference.scheduler_harness import SHUFFLE_CONF, Case, run_case

CASES = [
    Case(
        "shuffle evicts the running pods pdb names: those no budget protects",
        nodes=[node("n0", "4")],
        pods=[with_meta(running("kept-0", "kept", "n0"), {"app": "kept"}), with_meta(running("free-0", "free", "n0"), {"app": "free"}), running("bare-0", "bare", "n0")],
        podgroups=[podgroup(g, 1, phase="Running") for g in ("kept", "free", "bare")],
        pdbs=[budget("kept", "kept", 0)],
        conf=SHUFFLE_CONF,
        # A pod without labels is never a victim of pdb's.
        evictions=["free-0"],
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cycle(case: Case) -> None:
    run_case(case)
