"""In-memory cases for the sla and task-topology plugins and the backfill action, in the table of
test_scheduler_cases.py (same Case, helpers and check, from scheduler_harness.py), kept here so that file stays small.

Waiting times are measured from PodGroups created long ago, against either a short time (long
past) or a century (never past), so no case depends on the clock."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.plugins import sla
from tests.reference import builders
from tests.reference import scheduler_harness as harness
from tests.reference.builders import node, pod, podgroup
from tests.reference.scheduler_harness import Case

CENTURY = "876000h"
SLA_ENQUEUE_CONF = """
actions: "enqueue"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: sla}]
- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}]
"""
SLA_GLOBAL_CONF = SLA_ENQUEUE_CONF.replace("{name: sla}", "{name: sla, arguments: {sla-waiting-time: 1h}}")
SLA_ALLOCATE_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: sla}, {name: priority}, {name: gang}]
- plugins: [{name: predicates}]
"""
TOPOLOGY_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: task-topology}]
"""
NO_TOPOLOGY_CONF = TOPOLOGY_CONF.replace(", {name: task-topology}", "")
NO_BACKFILL_CONF = harness.GANG_CONF.replace("enqueue, allocate, backfill", "enqueue, allocate")


def annotated(pg: dict[str, Any], annotations: dict[str, str], created: str | None = None) -> dict[str, Any]:
    out = copy.deepcopy(pg)
    out["metadata"]["annotations"] = dict(annotations)
    if created:
        out["metadata"]["creationTimestamp"] = created
    return out


def task_pod(name: str, group: str, role: str, cpu: str = "1") -> dict[str, Any]:
    out = pod(name, group, cpu)
    out["metadata"]["annotations"][job_info.TASK_SPEC_KEY] = role
    return out


def best_effort(name: str, group: str, role: str = "") -> dict[str, Any]:
    out = task_pod(name, group, role) if role else pod(name, group)
    out["spec"]["containers"] = [{"name": "c"}]
    return out


def topology(name: str, min_member: int, **keys: str) -> dict[str, Any]:
    prefix = "volcano.sh/task-topology-"
    return annotated(podgroup(name, min_member), {prefix + k.replace("_", "-"): v for k, v in keys.items()})


CASES = [
    # --- sla ---------------------------------------------------------------------------------------
    Case(
        "sla: a job past its waiting time is enqueued although overcommit refuses it; others wait",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[
            annotated(podgroup("late", 8, "Pending", "8"), {"sla-waiting-time": "1h"}),
            annotated(podgroup("patient", 8, "Pending", "8"), {"sla-waiting-time": CENTURY}),
            podgroup("plain", 8, "Pending", "8"),
        ],
        conf=SLA_ENQUEUE_CONF,
        phases={"late": "Inqueue", "patient": "Pending", "plain": "Pending"},
    ),
    Case(
        "sla: the global waiting time applies to jobs without one; a job's own annotation wins",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[
            podgroup("plain", 8, "Pending", "8"),
            annotated(podgroup("own-century", 8, "Pending", "8"), {"volcano.sh/sla-waiting-time": CENTURY}),
        ],
        conf=SLA_GLOBAL_CONF,
        phases={"plain": "Inqueue", "own-century": "Pending"},
    ),
    Case(
        "sla: a waiting time that does not parse counts as none",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[annotated(podgroup("typo", 8, "Pending", "8"), {"sla-waiting-time": "1 hour"})],
        conf=SLA_ENQUEUE_CONF,
        phases={"typo": "Pending"},
    ),
    Case(
        "sla: the earlier deadline is allocated first, before an older or higher-priority job",
        nodes=[node("n0", "2")],
        pods=[pod("older-0", "older", "2"), pod("younger-0", "younger", "2"), pod("vip-0", "vip", "2")],
        podgroups=[
            annotated(podgroup("older", 1), {"sla-waiting-time": CENTURY}, created="2020-01-01T00:00:00Z"),
            annotated(podgroup("younger", 1), {"sla-waiting-time": "24h"}, created="2020-06-01T00:00:00Z"),
            podgroup("vip", 1, priority="high"),
        ],
        conf=SLA_ALLOCATE_CONF,
        binds={"younger-0": "n0"},
    ),
    Case(
        "without sla the higher-priority job is allocated first",
        nodes=[node("n0", "2")],
        pods=[pod("older-0", "older", "2"), pod("younger-0", "younger", "2"), pod("vip-0", "vip", "2")],
        podgroups=[
            annotated(podgroup("older", 1), {"sla-waiting-time": CENTURY}, created="2020-01-01T00:00:00Z"),
            annotated(podgroup("younger", 1), {"sla-waiting-time": "24h"}, created="2020-06-01T00:00:00Z"),
            podgroup("vip", 1, priority="high"),
        ],
        conf=SLA_ALLOCATE_CONF.replace("{name: sla}, ", ""),
        binds={"vip-0": "n0"},
    ),
    # --- task-topology -----------------------------------------------------------------------------
    Case(
        "task-topology: affine ps and worker go to the node with room for all three",
        nodes=[node("alpha", "2"), node("omega", "4")],
        pods=[task_pod("j-ps-0", "j", "ps"), task_pod("j-worker-0", "j", "worker"), task_pod("j-worker-1", "j", "worker")],
        podgroups=[topology("j", 3, affinity="ps,worker")],
        conf=TOPOLOGY_CONF,
        binds={"j-ps-0": "omega", "j-worker-0": "omega", "j-worker-1": "omega"},
    ),
    Case(
        "without task-topology the same job is split (first node by name first)",
        nodes=[node("alpha", "2"), node("omega", "4")],
        pods=[task_pod("j-ps-0", "j", "ps"), task_pod("j-worker-0", "j", "worker"), task_pod("j-worker-1", "j", "worker")],
        podgroups=[topology("j", 3, affinity="ps,worker")],
        conf=NO_TOPOLOGY_CONF,
        binds={"j-ps-0": "alpha", "j-worker-0": "alpha", "j-worker-1": "omega"},
    ),
    Case(
        "task-topology: self anti-affinity spreads a kind's pods over the nodes",
        nodes=[node("n0", "4"), node("n1", "4"), node("n2", "4")],
        pods=[task_pod(f"j-worker-{i}", "j", "worker") for i in range(3)],
        podgroups=[topology("j", 3, anti_affinity="worker")],
        conf=TOPOLOGY_CONF,
        binds={"j-worker-0": "n0", "j-worker-1": "n1", "j-worker-2": "n2"},
    ),
    Case(
        "task-topology: anti-affinity between kinds keeps ps and worker apart",
        nodes=[node("n0", "4"), node("n1", "4")],
        pods=[task_pod("j-ps-0", "j", "ps"), task_pod("j-worker-0", "j", "worker")],
        podgroups=[topology("j", 2, anti_affinity="ps,worker")],
        conf=TOPOLOGY_CONF,
        binds={"j-ps-0": "n0", "j-worker-0": "n1"},
    ),
    Case(
        "task-topology: the task order puts worker before ps",
        nodes=[node("n0", "2")],
        pods=[task_pod("j-ps-0", "j", "ps", "2"), task_pod("j-worker-0", "j", "worker", "2")],
        podgroups=[topology("j", 1, affinity="ps,worker", task_order="worker,ps")],
        conf=TOPOLOGY_CONF,
        binds={"j-worker-0": "n0"},
    ),
    Case(
        "task-topology: a task order alone (no affinity) changes nothing",
        nodes=[node("n0", "2")],
        pods=[task_pod("j-ps-0", "j", "ps", "2"), task_pod("j-worker-0", "j", "worker", "2")],
        podgroups=[topology("j", 1, task_order="worker,ps")],
        conf=TOPOLOGY_CONF,
        binds={"j-ps-0": "n0"},
    ),
    Case(
        "task-topology: an annotation naming a task the job lacks is ignored",
        nodes=[node("n0", "2")],
        pods=[task_pod("j-ps-0", "j", "ps", "2"), task_pod("j-worker-0", "j", "worker", "2")],
        podgroups=[topology("j", 1, affinity="ps,worker", task_order="worker,chief")],
        conf=TOPOLOGY_CONF,
        binds={"j-ps-0": "n0"},
    ),
    # --- backfill ----------------------------------------------------------------------------------
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
    harness.run_case(case)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1h2m3s4ms5us6ns", 3723.004005006), ("1.5h", 5400.0), ("90s", 90.0), ("300ms", 0.3), ("2µs", 2e-6), ("-2m", -120.0), ("0", 0.0)],
)
def test_go_durations_parse(text: str, seconds: float) -> None:
    parsed = sla.parse_duration(text)
    assert parsed is not None and abs(parsed.total_seconds() - seconds) < 1e-6


@pytest.mark.parametrize("text", ["", "1", "h", "1 hour", "1h 2m", "1.h5", "--1s", "1d"])
def test_other_strings_are_not_durations(text: str) -> None:
    assert sla.parse_duration(text) is None


def test_a_non_string_argument_is_ignored_as_upstream_does() -> None:
    plugin = sla.Sla({"sla-waiting-time": 1})
    assert plugin.global_waiting_time is None
    assert sla.Sla({"sla-waiting-time": "90s"}).global_waiting_time == datetime.timedelta(seconds=90)


def test_an_overdue_job_is_voted_pipelined_and_enqueueable() -> None:
    """sla's Permit in the first tier ends the vote; gang's Reject in the next is never heard."""
    from reference_scheduler.scheduler import conf_load
    from reference_scheduler.scheduler.framework import framework, session_plugins

    groups = [annotated(podgroup("late", 2), {"sla-waiting-time": "1m"}), annotated(podgroup("early", 2), {"sla-waiting-time": CENTURY})]
    pods = [pod("late-0", "late"), pod("late-1", "late"), pod("early-0", "early"), pod("early-1", "early")]
    cache = harness.FakeCache([node("n0")], pods, groups, [builders.queue()])
    ssn = framework.open_session(cache, conf_load.parse("actions: allocate\ntiers:\n- plugins: [{name: sla}]\n- plugins: [{name: gang}]\n"))
    late, early = ssn.jobs["ns/late"], ssn.jobs["ns/early"]
    assert session_plugins.job_pipelined(ssn, late) and session_plugins.job_enqueueable(ssn, late)
    # Not yet due: sla abstains and gang, next tier, rejects a job with nothing placed.
    assert not session_plugins.job_pipelined(ssn, early)
    assert session_plugins.job_order_key(ssn)(late, early) < 0


def test_task_topology_batch_score_covers_every_node_at_once() -> None:
    """TaskTopology.score(task, nodes) is the batch form of its node order: one score per node."""
    from reference_scheduler.scheduler import conf_load
    from reference_scheduler.scheduler.framework import framework

    pods = [task_pod("j-ps-0", "j", "ps"), task_pod("j-worker-0", "j", "worker"), task_pod("j-worker-1", "j", "worker")]
    cache = harness.FakeCache([node("alpha", "2"), node("omega", "4"), node("tiny", "500m")], pods, [topology("j", 3, affinity="ps,worker")], [builders.queue()])
    ssn = framework.open_session(cache, conf_load.parse(TOPOLOGY_CONF))
    plugin = ssn.plugins["task-topology"]
    ps = next(t for t in ssn.jobs["ns/j"].tasks.values() if t.role == "ps")
    # alpha holds two of the bucket's three (2 of 3 -> 66.7), omega all (100), tiny not even ps (0).
    assert plugin.score(ps, ssn.node_list()) == pytest.approx([200 / 3, 100.0, 0.0])
