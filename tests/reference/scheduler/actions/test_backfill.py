"""The backfill action on in-memory snapshots: best-effort pods (no requests), which allocate
leaves alone, are placed, in job order, and only where their gang can complete.

Upstream: pkg/scheduler/actions/backfill/backfill.go."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reference.builders import node, pod, podgroup, task_pod
from tests.reference.scheduler_harness import GANG_CONF, Case, run_case

NO_BACKFILL_CONF = GANG_CONF.replace("enqueue, allocate, backfill", "enqueue, allocate")


def best_effort(name: str, group: str, role: str = "") -> dict[str, Any]:
    out = task_pod(name, group, role) if role else pod(name, group)
    out["spec"]["containers"] = [{"name": "c"}]
    return out


CASES = [
    Case(
        "backfill: best-effort pods are placed",
        nodes=[node("n0", "1")],
        pods=[best_effort("be-0", "be"), best_effort("be-1", "be")],
        podgroups=[podgroup("be", 2)],
        binds={"be-0": "n0", "be-1": "n0"},
    ),
    Case(
        "without backfill best-effort pods stay Pending (allocate leaves them alone)",
        nodes=[node("n0", "1")],
        pods=[best_effort("be-0", "be"), pod("req-0", "req")],
        podgroups=[podgroup("be", 1), podgroup("req", 1)],
        conf=NO_BACKFILL_CONF,
        binds={"req-0": "n0"},
    ),
    Case(
        "backfill: a best-effort pod is placed beside another job's unschedulable gang",
        nodes=[node("n0", "3"), node("n1", "3")],
        pods=[pod(f"big-{i}", "big", "2") for i in range(3)] + [best_effort("tiny-0", "tiny")],
        podgroups=[podgroup("big", 3), podgroup("tiny", 1)],
        binds={"tiny-0": "n0"},
    ),
    Case(
        "backfill: a best-effort member of a gang that cannot complete is not bound",
        nodes=[node("n0", "3"), node("n1", "3")],
        pods=[task_pod(f"g-main-{i}", "g", "main", "2") for i in range(3)] + [best_effort("g-side-0", "g", "side")],
        podgroups=[podgroup("g", 4)],
        binds={},
        phases={"g": "Inqueue"},
    ),
    Case(
        "backfill: best-effort members complete a gang once the others are placed",
        nodes=[node("n0", "4")],
        pods=[task_pod(f"g-main-{i}", "g", "main", "2") for i in range(2)] + [best_effort(f"g-side-{i}", "g", "side") for i in range(2)],
        podgroups=[podgroup("g", 4)],
        binds={"g-main-0": "n0", "g-main-1": "n0", "g-side-0": "n0", "g-side-1": "n0"},
    ),
    Case(
        "backfill: job order decides who gets the node's last pod slot",
        nodes=[node("n0", pods="1")],
        pods=[best_effort("lo-0", "lo"), best_effort("hi-0", "hi")],
        podgroups=[podgroup("lo", 1, priority="low"), podgroup("hi", 1, priority="high")],
        binds={"hi-0": "n0"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)
