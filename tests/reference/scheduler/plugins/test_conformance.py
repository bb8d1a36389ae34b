"""conformance on in-memory snapshots: a critical pod (system-cluster-critical) is never a victim.

Upstream: pkg/scheduler/plugins/conformance/conformance.go."""

from __future__ import annotations

import pytest

from tests.reference.builders import node, pod, podgroup, running
from tests.reference.scheduler_harness import PREEMPT_CONF, Case, run_case

CASES = [
    Case(
        "conformance keeps a system-cluster-critical pod from being a victim",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[*(running(f"crit-{i}", "crit", "n0", priorityClassName="system-cluster-critical") for i in range(2)), *(running(f"plain-{i}", "plain", "n1") for i in range(2)), pod("high-0", "high")],
        podgroups=[podgroup("crit", 1, phase="Running", priority="low"), podgroup("plain", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        evictions=["plain-0"],
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cycle(case: Case) -> None:
    run_case(case)
