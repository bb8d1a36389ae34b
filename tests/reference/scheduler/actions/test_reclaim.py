"""The reclaim action on in-memory snapshots: a queue under its share takes from an overused one,
never from one that is not reclaimable; and the order victims are taken in: inside a job the
reverse of task order; across jobs of one queue the reverse of job order; across queues the
victim queue order, which capacity fills in with enableHierarchy (the queue sharing the deepest
ancestor with the evictor's goes first) and which otherwise falls back to the reverse of queue
order.

Upstream: pkg/scheduler/actions/reclaim/reclaim.go, pkg/scheduler/framework/session_plugins.go
(BuildVictimsPriorityQueue, VictimQueueOrderFn), pkg/scheduler/plugins/capacity/capacity.go
(getQueueLevel)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reference.builders import node, pod, podgroup, queue, running
from tests.reference.scheduler_harness import Case, run_case

RECLAIM_CONF = """
actions: "allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: proportion}]
"""


CASES = [
    Case(
        "reclaim: a queue under its share takes from an overused one",
        nodes=[node("n0", "2")],
        pods=[pod("a-0", "a", "1", node_name="n0", phase="Running"), pod("a-1", "a", "1", node_name="n0", phase="Running"), pod("b-0", "b", "1")],
        podgroups=[podgroup("a", 1, queue="qa"), podgroup("b", 1, queue="qb")],
        queues=[queue("qa"), queue("qb")],
        conf=RECLAIM_CONF,
        binds={},
        evictions=["a-0"],
    ),
    Case(
        "reclaim: nothing from a queue that is not reclaimable",
        nodes=[node("n0", "2")],
        pods=[pod("a-0", "a", "1", node_name="n0", phase="Running"), pod("a-1", "a", "1", node_name="n0", phase="Running"), pod("b-0", "b", "1")],
        podgroups=[podgroup("a", 1, queue="qa"), podgroup("b", 1, queue="qb")],
        queues=[{**queue("qa"), "spec": {"weight": 1, "reclaimable": False}}, queue("qb")],
        conf=RECLAIM_CONF,
        binds={},
        evictions=[],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)


# --- the order victims are taken in ----------------------------------------------------------------
HIERARCHY_RECLAIM = """
actions: "enqueue, allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: capacity, enableHierarchy: true}]
- plugins: [{name: predicates}]
"""
FLAT_RECLAIM = HIERARCHY_RECLAIM.replace(", enableHierarchy: true", "")


def capacity_queue(name: str, deserved: str, parent: str = "", created: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    return queue(name, deserved={"cpu": deserved}, parent=parent, created=created)


def group(name: str, queue_name: str, created: str, phase: str = "Running") -> dict[str, Any]:
    made = podgroup(name, 1, phase=phase, queue=queue_name)
    made["metadata"]["creationTimestamp"] = created
    return made


# team-a (4) -> a1 (2), a2 (2); team-b (4) -> b1 (2). a2's job is older than b1's; each runs four
# 1-CPU pods on an 8-CPU node, twice its leaf's deserved share; a1 asks for one CPU.
TREE = [
    queue("root"),
    capacity_queue("team-a", "4"), capacity_queue("team-b", "4"),
    capacity_queue("a1", "2", "team-a"), capacity_queue("a2", "2", "team-a"), capacity_queue("b1", "2", "team-b"),
]
FULL_NODE = [running(f"a2-{i}", "a2g") for i in range(4)] + [running(f"b1-{i}", "b1g") for i in range(4)]
GROUPS = [group("a2g", "a2", "2026-01-01T00:00:01Z"), group("b1g", "b1", "2026-01-01T00:00:02Z"), group("a1g", "a1", "2026-01-01T00:00:03Z", phase="Inqueue")]

VICTIM_ORDER_CASES = [
    Case(
        "hierarchy: the sibling queue's pod goes before the cousin's, although the cousin's job is newer",
        nodes=[node("n0", "8")], pods=[*FULL_NODE, pod("a1-0", "a1g")], podgroups=GROUPS, queues=TREE,
        conf=HIERARCHY_RECLAIM, binds={}, evictions=["a2-1"],
    ),
    Case(
        "hierarchy: the reclaimer under team-b takes from b1, now the sibling",
        nodes=[node("n0", "8")], pods=[*FULL_NODE, pod("b2-0", "b2g")],
        podgroups=[*GROUPS[:2], group("b2g", "b2", "2026-01-01T00:00:03Z", phase="Inqueue")],
        queues=[*TREE, capacity_queue("b2", "2", "team-b")],
        conf=HIERARCHY_RECLAIM, binds={}, evictions=["b1-1"],
    ),
    Case(
        "flat: victims of two queues go in the reverse of queue order (equal shares: the later queue's first)",
        nodes=[node("n0", "8")], pods=[*FULL_NODE, pod("a1-0", "a1g")], podgroups=GROUPS,
        queues=[queue("root"), capacity_queue("a1", "2"), capacity_queue("a2", "2", created="2026-01-01T00:00:01Z"), capacity_queue("b1", "2", created="2026-01-01T00:00:02Z")],
        conf=FLAT_RECLAIM, binds={}, evictions=["b1-1"],
    ),
    Case(
        "flat: the queue order decides, not the jobs' age (b1 created first, so a2's pod goes first)",
        nodes=[node("n0", "8")], pods=[*FULL_NODE, pod("a1-0", "a1g")], podgroups=GROUPS,
        queues=[queue("root"), capacity_queue("a1", "2"), capacity_queue("a2", "2", created="2026-01-01T00:00:02Z"), capacity_queue("b1", "2", created="2026-01-01T00:00:01Z")],
        conf=FLAT_RECLAIM, binds={}, evictions=["a2-1"],
    ),
]


@pytest.mark.parametrize("case", VICTIM_ORDER_CASES, ids=[c.name for c in VICTIM_ORDER_CASES])
def test_victim_order(case: Case) -> None:
    run_case(case)
