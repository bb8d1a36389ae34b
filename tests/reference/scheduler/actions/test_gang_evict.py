"""gangpreempt and gangreclaim on in-memory snapshots (one cycle each): a starving job takes room
for all its pending tasks at once, safe bundles (a victim's pods beyond its minAvailable, each role
kept at its own minimum) before whole gangs, one whole gang rather than a pod of each; gangpreempt
only from strictly lower-priority jobs of its queue, gangreclaim only from other, reclaimable queues
down to their deserved share; nothing is evicted when the job would not then be placed.

Upstream: pkg/scheduler/actions/gangpreempt, gangreclaim, utils/bundle.go (v1.15)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reference.builders import node, pod, podgroup, queue, running
from tests.reference.scheduler_harness import Case, run_case

GANG_PREEMPT = """
actions: "allocate, backfill, gangreclaim, gangpreempt"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}, {name: capacity}]
- plugins: [{name: predicates}]
"""
WITHOUT_WHOLE = GANG_PREEMPT + """
configurations:
- name: gangpreempt
  arguments: {allowWholeBundle: false}
- name: gangreclaim
  arguments: {allowWholeBundle: false}
"""
NODES = [node(f"n{i}", "1") for i in range(4)]


def gang(name: str, count: int, first_node: int = 0, cpu: str = "1") -> list[dict[str, Any]]:
    return [running(f"{name}-{i}", name, node_name=f"n{first_node + i}", cpu=cpu) for i in range(count)]


def waiting(name: str, count: int) -> list[dict[str, Any]]:
    return [pod(f"{name}-{i}", name) for i in range(count)]


def with_role(p: dict[str, Any], role: str) -> dict[str, Any]:
    p["metadata"]["annotations"]["volcano.sh/task-spec"] = role
    return p


def roles_group(name: str, min_member: int, roles: dict[str, int], **kwargs: Any) -> dict[str, Any]:
    made = podgroup(name, min_member, phase="Running", **kwargs)
    made["spec"]["minTaskMember"] = roles
    return made


def cpu_queue(name: str, deserved: str, reclaimable: bool = True) -> dict[str, Any]:
    made = queue(name, deserved={"cpu": deserved})
    made["spec"]["reclaimable"] = reclaimable
    return made


def with_partition(p: dict[str, Any], partition: int) -> dict[str, Any]:
    p["metadata"]["labels"] = {"volcano.sh/task-spec": "main", "volcano.sh/partition-id": str(partition)}
    return p


def partitioned_group(name: str, min_member: int, min_groups: int, **kwargs: Any) -> dict[str, Any]:
    made = podgroup(name, min_member, phase="Running", **kwargs)
    made["spec"]["subGroupPolicy"] = [{"name": "main", "subGroupSize": 2, "minSubGroups": min_groups, "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "main"}}, "matchLabelKeys": ["volcano.sh/partition-id"]}]
    return made


CASES = [
    Case(
        "gangpreempt: the victim's pods beyond its minAvailable (its safe bundle) make the room",
        nodes=NODES,
        pods=[*gang("low", 4), *waiting("high", 2)],
        podgroups=[podgroup("low", 2, phase="Running", priority="low"), podgroup("high", 2, priority="high")],
        conf=GANG_PREEMPT,
        evictions=["low-0", "low-1"],
    ),
    Case(
        "gangpreempt: with no pod to spare, one whole gang goes (the one job order serves last), not a pod of each",
        nodes=NODES,
        pods=[*gang("vic-a", 2), *gang("vic-b", 2, first_node=2), *waiting("high", 2)],
        podgroups=[podgroup("vic-a", 2, phase="Running", priority="low"), podgroup("vic-b", 2, phase="Running", priority="low"), podgroup("high", 2, priority="high")],
        conf=GANG_PREEMPT,
        evictions=["vic-b-0", "vic-b-1"],
    ),
    Case(
        "gangpreempt: allowWholeBundle false breaks no gang, so nothing is evicted",
        nodes=NODES,
        pods=[*gang("vic-a", 2), *gang("vic-b", 2, first_node=2), *waiting("high", 2)],
        podgroups=[podgroup("vic-a", 2, phase="Running", priority="low"), podgroup("vic-b", 2, phase="Running", priority="low"), podgroup("high", 2, priority="high")],
        conf=WITHOUT_WHOLE,
        evictions=[],
    ),
    Case(
        "gangpreempt: a whole bundle takes all of its gang's pods in the domain, though fewer would do",
        nodes=NODES,
        pods=[*gang("low", 4), *waiting("high", 2)],
        podgroups=[podgroup("low", 4, phase="Running", priority="low"), podgroup("high", 2, priority="high")],
        conf=GANG_PREEMPT,
        evictions=["low-0", "low-1", "low-2", "low-3"],
    ),
    Case(
        "gangpreempt: a job of equal priority is no victim",
        nodes=NODES,
        pods=[*gang("low", 4), *waiting("peer", 2)],
        podgroups=[podgroup("low", 2, phase="Running", priority="low"), podgroup("peer", 2, priority="low")],
        conf=GANG_PREEMPT,
        evictions=[],
    ),
    Case(
        "gangpreempt: nothing from another queue",
        nodes=NODES,
        pods=[*gang("low", 4), *waiting("high", 2)],
        podgroups=[podgroup("low", 2, phase="Running", priority="low", queue="q2"), podgroup("high", 2, priority="high", queue="q1")],
        queues=[cpu_queue("q1", "2"), cpu_queue("q2", "2", reclaimable=False)],
        conf=GANG_PREEMPT,
        evictions=[],
    ),
    Case(
        "gangpreempt: nothing is evicted when even every victim would not make room for all pending tasks",
        nodes=NODES,
        pods=[*gang("low", 2), *gang("top", 2, first_node=2), *waiting("high", 4)],
        podgroups=[podgroup("low", 2, phase="Running", priority="low"), podgroup("top", 2, phase="Running", priority="high"), podgroup("high", 4, priority="high")],
        conf=GANG_PREEMPT,
        evictions=[],
    ),
    Case(
        "gangpreempt: a role at its own minimum keeps its pods; the spare comes from the role above its minimum",
        nodes=NODES,
        pods=[with_role(running("v-ps-0", "v", node_name="n0"), "ps"), *(with_role(running(f"v-worker-{i}", "v", node_name=f"n{i + 1}"), "worker") for i in range(3)), *waiting("high", 1)],
        podgroups=[roles_group("v", 3, {"ps": 1, "worker": 2}, priority="low"), podgroup("high", 1, priority="high")],
        conf=GANG_PREEMPT,
        evictions=["v-worker-0"],
    ),
    Case(
        "gangreclaim: a queue above its deserved share gives back its safe bundle",
        nodes=NODES,
        pods=[*gang("victim", 4), *waiting("reclaimer", 2)],
        podgroups=[podgroup("victim", 2, phase="Running", queue="q2"), podgroup("reclaimer", 2, queue="q1")],
        queues=[cpu_queue("q1", "2"), cpu_queue("q2", "2")],
        conf=GANG_PREEMPT,
        evictions=["victim-0", "victim-1"],
    ),
    Case(
        "gangreclaim: capacity lets whole gangs go only down to the queue's deserved share: one gang",
        nodes=NODES,
        pods=[*gang("vic-a", 2), *gang("vic-b", 2, first_node=2), *waiting("reclaimer", 2)],
        podgroups=[podgroup("vic-a", 2, phase="Running", queue="q2"), podgroup("vic-b", 2, phase="Running", queue="q2"), podgroup("reclaimer", 2, queue="q1")],
        queues=[cpu_queue("q1", "2"), cpu_queue("q2", "2")],
        conf=GANG_PREEMPT,
        # Equal bundles fall to the victim job's uid: vic-a's (the reference's tie-break).
        evictions=["vic-a-0", "vic-a-1"],
    ),
    Case(
        "gangreclaim: nothing from a queue that is not reclaimable",
        nodes=NODES,
        pods=[*gang("victim", 4), *waiting("reclaimer", 2)],
        podgroups=[podgroup("victim", 2, phase="Running", queue="q2"), podgroup("reclaimer", 2, queue="q1")],
        queues=[cpu_queue("q1", "2"), cpu_queue("q2", "2", reclaimable=False)],
        conf=GANG_PREEMPT,
        evictions=[],
    ),
    Case(
        "gangreclaim: nothing from a queue within its deserved share",
        nodes=NODES,
        pods=[*gang("j2", 2), *gang("j3", 2, first_node=2), *waiting("reclaimer", 2)],
        podgroups=[podgroup("j2", 2, phase="Running", queue="q2"), podgroup("j3", 2, phase="Running", queue="q3"), podgroup("reclaimer", 2, queue="q1")],
        queues=[cpu_queue("q1", "2"), cpu_queue("q2", "2"), cpu_queue("q3", "2")],
        conf=GANG_PREEMPT,
        evictions=[],
    ),
    Case(
        "gangpreempt: a victim that needs one whole partition loses both pods of one, not a pod of each",
        nodes=NODES,
        # Partitions interleaved by name: v-0 and v-2 are partition 0, v-1 and v-3 partition 1.
        pods=[*(with_partition(p, i % 2) for i, p in enumerate(gang("v", 4))), *waiting("high", 2)],
        podgroups=[partitioned_group("v", 2, 1, priority="low"), podgroup("high", 2, priority="high")],
        conf=GANG_PREEMPT,
        evictions=["v-0", "v-2"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)


@pytest.mark.parametrize(("case", "reason"), [(CASES[0], "gangpreempt"), (CASES[8], "gangreclaim")])
def test_evictions_say_which_action_took_them(case: Case, reason: str) -> None:
    assert run_case(case).eviction_reasons == [reason, reason]
