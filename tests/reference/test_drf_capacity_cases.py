"""In-memory cases for the drf plugin (job order by dominant share, the preemption share rule,
hierarchical DRF over queue paths) and the capacity plugin (deserved, capability, reclaim down to
deserved, closed queues, enqueue, the queue tree of spec.parent), in the table of
test_scheduler_cases.py (same Case, helpers and check, from scheduler_harness.py), kept here so that file stays small.
A case may also say how many pods each PodGroup gets and which events must be recorded.

Upstream: pkg/scheduler/plugins/drf/drf.go, pkg/scheduler/plugins/capacity/capacity.go.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework
from tests.reference import scheduler_harness as harness
from tests.reference.builders import node, pod, podgroup, queue

DRF_ALLOCATE_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: drf}, {name: predicates}]
"""
NO_DRF_ALLOCATE_CONF = DRF_ALLOCATE_CONF.replace("{name: drf}, ", "")
DRF_PREEMPT_CONF = """
actions: "allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}]
"""
HDRF_ALLOCATE_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: drf, enableHierarchy: true}, {name: predicates}]
"""
HDRF_RECLAIM_CONF = """
actions: "allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: drf, enableHierarchy: true}]
- plugins: [{name: predicates}]
"""
CAPACITY_CONF = """
actions: "enqueue, allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: capacity}]
"""
HIERARCHY_CAPACITY_CONF = CAPACITY_CONF.replace("{name: capacity}", "{name: capacity, enableHierarchy: true}")


@dataclasses.dataclass
class Case(harness.Case):
    # binds per PodGroup (where the split matters, not the nodes)
    per_job: dict[str, int] | None = None
    # (object name, reason, message) events that must have been recorded
    events: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)


def sized(name: str, group: str, cpu: str, memory: str, **kwargs: Any) -> dict[str, Any]:
    """A pod asking for CPU and memory."""
    made = pod(name, group, cpu, **kwargs)
    made["spec"]["containers"][0]["resources"]["requests"]["memory"] = memory
    return made


def running(name: str, group: str, cpu: str = "1", on: str = "n0") -> dict[str, Any]:
    return pod(name, group, cpu, node_name=on, phase="Running")


def quota_queue(name: str, deserved: dict[str, str] | None = None, capability: dict[str, str] | None = None, guarantee: dict[str, str] | None = None, parent: str = "", state: str = "Open") -> dict[str, Any]:
    made = queue(name, capability=capability, state=state)
    if deserved:
        made["spec"]["deserved"] = deserved
    if guarantee:
        made["spec"]["guarantee"] = {"resource": guarantee}
    if parent:
        made["spec"]["parent"] = parent
    return made


def path_queue(name: str, hierarchy: str, weights: str) -> dict[str, Any]:
    made = queue(name)
    made["metadata"]["annotations"] = {"volcano.sh/hierarchy": hierarchy, "volcano.sh/hierarchy-weights": weights}
    return made


# heavy holds memory (500m, 4Gi: dominant memory), light holds CPU (1500m, 1Gi: dominant CPU).
MIXED = [sized(f"heavy-{i}", "heavy", "500m", "4Gi") for i in range(3)] + [sized(f"light-{i}", "light", "1500m", "1Gi") for i in range(2)]
FOUR_RUNNING = [running(f"big-{i}", "big") for i in range(4)]

CASES = [
    Case(
        "drf: the job with the smaller dominant share goes first, whatever its CPU share",
        nodes=[node("n0", "4")],
        pods=MIXED,
        podgroups=[podgroup("heavy", 1), podgroup("light", 1)],
        conf=DRF_ALLOCATE_CONF,
        binds={"heavy-0": "n0", "heavy-1": "n0", "light-0": "n0", "light-1": "n0"},
    ),
    Case(
        "drf off: the same jobs go in creation order and the older takes the room",
        nodes=[node("n0", "4")],
        pods=MIXED,
        podgroups=[podgroup("heavy", 1), podgroup("light", 1)],
        conf=NO_DRF_ALLOCATE_CONF,
        binds={"heavy-0": "n0", "heavy-1": "n0", "heavy-2": "n0", "light-0": "n0"},
    ),
    Case(
        "drf preempt: a job with a smaller share takes from a bigger one until their shares meet",
        nodes=[node("n0", "4")],
        pods=[*FOUR_RUNNING, pod("fair-0", "fair"), pod("fair-1", "fair")],
        podgroups=[podgroup("big", 1, phase="Running"), podgroup("fair", 2)],
        conf=DRF_PREEMPT_CONF,
        binds={},
        evictions=["big-2", "big-0"],
    ),
    Case(
        "drf preempt: equal shares after the move still allow it",
        nodes=[node("n0", "4")],
        pods=[running("big-0", "big"), running("big-1", "big"), running("fair-0", "fair"), running("fair-1", "fair"), pod("late-0", "late")],
        podgroups=[podgroup("big", 1, phase="Running"), podgroup("fair", 1, phase="Running"), podgroup("late", 1)],
        conf=DRF_PREEMPT_CONF,
        binds={},
        evictions=["fair-0"],
    ),
    Case(
        "drf preempt: nothing when the preemptor's job would end above its victims",
        nodes=[node("n0", "4")],
        pods=[running("big-0", "big"), running("big-1", "big"), running("fair-0", "fair"), running("fair-1", "fair"), pod("late-0", "late"), pod("late-1", "late")],
        podgroups=[podgroup("big", 1, phase="Running"), podgroup("fair", 1, phase="Running"), podgroup("late", 2)],
        conf=DRF_PREEMPT_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        # Weights that never tie: with three queues a tie at an upper level falls back to the
        # leaves' creation order, which is not a consistent order (see scenarios/drf/README.md).
        "hdrf: root/sci (1) and root/eng (3) share the cluster 1:3, eng's two children split its part",
        nodes=[node("n0", "4")],
        pods=[pod(f"{q}-{i}", q, "500m") for q in ("sci", "dev", "prod") for i in range(8)],
        podgroups=[podgroup("sci", 1, queue="sci"), podgroup("dev", 1, queue="dev"), podgroup("prod", 1, queue="prod")],
        queues=[path_queue("sci", "root/sci", "1/1"), path_queue("dev", "root/eng/dev", "1/3/1"), path_queue("prod", "root/eng/prod", "1/3/1")],
        conf=HDRF_ALLOCATE_CONF,
        bind_count=8,
        per_job={"sci": 2, "dev": 3, "prod": 3},
    ),
    Case(
        "hdrf: the level weights count (root/a 1, root/b 3)",
        nodes=[node("n0", "4")],
        pods=[pod(f"{q}-{i}", q, "500m") for q in ("a", "b") for i in range(8)],
        podgroups=[podgroup("a", 1, queue="a"), podgroup("b", 1, queue="b")],
        queues=[path_queue("a", "root/a", "1/1"), path_queue("b", "root/b", "1/3")],
        conf=HDRF_ALLOCATE_CONF,
        bind_count=8,
        per_job={"a": 2, "b": 6},
    ),
    Case(
        "hdrf reclaim: a queue behind another takes from it",
        nodes=[node("n0", "4")],
        pods=[running(f"a-{i}", "a") for i in range(4)] + [pod("b-0", "b")],
        podgroups=[podgroup("a", 1, phase="Running", queue="a"), podgroup("b", 1, queue="b")],
        queues=[path_queue("a", "root/a", "1/1"), path_queue("b", "root/b", "1/1")],
        conf=HDRF_RECLAIM_CONF,
        binds={},
        evictions=["a-2"],
    ),
    Case(
        "hdrf reclaim: nothing once the reclaimer's queue would be ahead",
        nodes=[node("n0", "4")],
        pods=[running("a-0", "a"), running("a-1", "a"), running("b-0", "b"), running("b-1", "b"), pod("b2-0", "b2")],
        podgroups=[podgroup("a", 1, phase="Running", queue="a"), podgroup("b", 1, phase="Running", queue="b"), podgroup("b2", 1, queue="b")],
        queues=[path_queue("a", "root/a", "1/1"), path_queue("b", "root/b", "1/1")],
        conf=HDRF_RECLAIM_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "capacity: an idle cluster lets a queue run beyond its deserved share",
        nodes=[node("n0", "4")],
        pods=[pod(f"a-{i}", "a") for i in range(4)],
        podgroups=[podgroup("a", 1, queue="qa")],
        queues=[quota_queue("qa", deserved={"cpu": "1"})],
        conf=CAPACITY_CONF,
        bind_count=4,
    ),
    Case(
        "capacity: a queue never runs beyond its capability",
        nodes=[node("n0", "4")],
        pods=[pod(f"a-{i}", "a") for i in range(4)],
        podgroups=[podgroup("a", 1, queue="qa")],
        queues=[quota_queue("qa", deserved={"cpu": "1"}, capability={"cpu": "2"})],
        conf=CAPACITY_CONF,
        bind_count=2,
    ),
    Case(
        "capacity: reclaim takes from a queue above its deserved share down to it",
        nodes=[node("n0", "4")],
        pods=[running(f"a-{i}", "a") for i in range(4)] + [pod("b-0", "b"), pod("b-1", "b"), pod("b-2", "b")],
        podgroups=[podgroup("a", 1, phase="Running", queue="qa"), podgroup("b", 3, queue="qb")],
        queues=[quota_queue("qa", deserved={"cpu": "2"}), quota_queue("qb", deserved={"cpu": "2"})],
        conf=CAPACITY_CONF,
        binds={},
        evictions=["a-2", "a-1"],
    ),
    Case(
        "capacity: no reclaim once the reclaimer would pass its deserved share",
        nodes=[node("n0", "4")],
        pods=[running("a-0", "a"), running("a-1", "a"), running("a-2", "a"), running("b-0", "b"), pod("b2-0", "b2")],
        podgroups=[podgroup("a", 1, phase="Running", queue="qa"), podgroup("b", 1, phase="Running", queue="qb"), podgroup("b2", 1, queue="qb")],
        queues=[quota_queue("qa", deserved={"cpu": "3"}), quota_queue("qb", deserved={"cpu": "1"})],
        conf=CAPACITY_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "capacity: never below a queue's guarantee",
        nodes=[node("n0", "4")],
        pods=[running(f"a-{i}", "a") for i in range(4)] + [pod("b-0", "b")],
        podgroups=[podgroup("a", 1, phase="Running", queue="qa"), podgroup("b", 1, queue="qb")],
        queues=[quota_queue("qa", deserved={"cpu": "1"}, guarantee={"cpu": "4"}), quota_queue("qb", deserved={"cpu": "2"})],
        conf=CAPACITY_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "capacity: a closed queue allocates nothing",
        nodes=[node("n0", "4")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1, queue="qa")],
        queues=[quota_queue("qa", deserved={"cpu": "1"}, state="Closed")],
        conf=CAPACITY_CONF,
        binds={},
    ),
    Case(
        "capacity: enqueue refuses a job whose minimum passes the queue's capability",
        nodes=[node("n0", "8")],
        pods=[],
        podgroups=[podgroup("a", 3, phase="Pending", min_cpu="3", queue="qa")],
        queues=[quota_queue("qa", capability={"cpu": "2"})],
        conf=CAPACITY_CONF,
        phases={"a": "Pending"},
        events=[("a", "Unschedulable", "queue resource quota insufficient: insufficient cpu")],
    ),
    Case(
        "capacity hierarchy: a leaf inherits its parent's capability",
        nodes=[node("n0", "8")],
        pods=[pod(f"a-{i}", "a") for i in range(4)],
        podgroups=[podgroup("a", 1, queue="leaf")],
        queues=[quota_queue("root"), quota_queue("mid", capability={"cpu": "2"}), quota_queue("leaf", parent="mid")],
        conf=HIERARCHY_CAPACITY_CONF,
        bind_count=2,
    ),
    Case(
        "capacity hierarchy: nothing is scheduled while children deserve more than their parent",
        nodes=[node("n0", "8")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1, queue="leaf")],
        queues=[quota_queue("root"), quota_queue("mid", deserved={"cpu": "1"}), quota_queue("leaf", parent="mid", deserved={"cpu": "2"})],
        conf=HIERARCHY_CAPACITY_CONF,
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    harness.run_case(case)
    if case.per_job is None and not case.events:
        return
    cache = harness.FakeCache(case.nodes, case.pods, case.podgroups, case.queues, harness.PRIORITY_CLASSES)
    framework.run_cycle(cache, conf_load.parse(case.conf))
    if case.per_job is not None:
        groups = {p["metadata"]["name"]: p["metadata"]["annotations"][job_info.GROUP_NAME_ANNOTATION] for p in case.pods}
        bound = {group: sum(1 for name in cache.binds if groups[name] == group) for group in case.per_job}
        assert bound == case.per_job, cache.binds
    for event in case.events:
        assert event in cache.events, cache.events


def test_the_hierarchy_split_does_not_depend_on_creation_order() -> None:
    """The weights of the hdrf scenario never tie, so every order of creating its queues and jobs
    gives the same split (equal weights would not: see scenarios/drf/README.md)."""
    case = next(c for c in CASES if c.name.startswith("hdrf: root/sci (1)"))
    for queue_order, job_order in itertools.product(itertools.permutations(range(3)), repeat=2):
        queues, podgroups = copy.deepcopy(case.queues), copy.deepcopy(case.podgroups)
        for objects, order in ((queues, queue_order), (podgroups, job_order)):
            for obj, second in zip(objects, order, strict=True):
                obj["metadata"]["creationTimestamp"] = f"2026-01-01T00:00:0{second}Z"
        cache = harness.FakeCache(case.nodes, case.pods, podgroups, queues, [])
        framework.run_cycle(cache, conf_load.parse(case.conf))
        bound = {group: sum(1 for name in cache.binds if name.startswith(f"{group}-")) for group in ("sci", "dev", "prod")}
        assert bound == case.per_job, (queue_order, job_order, bound)
