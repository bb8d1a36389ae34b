"""The reference scheduler on in-memory snapshots: table-driven cases of nodes, pods, PodGroups,
queues and a conf, against the binds, PodGroup phases and conditions Volcano's rules give.
(Behavior against the real API is proven by the scenarios.)"""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.scheduler import conf, conf_load
from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import Case, run_case

NO_GANG_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}]
- plugins: [{name: predicates}, {name: proportion}]
"""
PREEMPT_CONF = """
actions: "allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}]
"""
RECLAIM_CONF = """
actions: "allocate, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}, {name: proportion}]
"""
BINPACK_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: binpack}]
"""
OVERCOMMIT_CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: overcommit}, {name: predicates}]
"""


CASES = [
    Case(
        "gang fits: every pod bound, PodGroup Running",
        nodes=[node("n0"), node("n1")],
        pods=[pod("a-0", "a", "3"), pod("a-1", "a", "3")],
        podgroups=[podgroup("a", 2)],
        binds={"a-0": "n0", "a-1": "n1"},
        phases={"a": "Inqueue"},  # bound but not yet Running: the phase follows observed pods
        conditions={"a": ("Scheduled", "tasks in gang are ready to be scheduled", "")},
    ),
    Case(
        "partial gang: nothing bound, Unschedulable with Volcano's message",
        nodes=[node("n0", "3"), node("n1", "3")],
        pods=[pod(f"a-{i}", "a", "2") for i in range(3)],
        podgroups=[podgroup("a", 3)],
        binds={},
        phases={"a": "Inqueue"},
        conditions={"a": ("Unschedulable", "NotEnoughResources", "3/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable")},
    ),
    Case(
        "without gang the same job is partly bound",
        nodes=[node("n0", "3"), node("n1", "3")],
        pods=[pod(f"a-{i}", "a", "2") for i in range(3)],
        podgroups=[podgroup("a", 3)],
        conf=NO_GANG_CONF,
        bind_count=2,
    ),
    Case(
        "minAvailable below replicas: every pod that fits is bound",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[pod(f"a-{i}", "a", "2") for i in range(4)],
        podgroups=[podgroup("a", 1)],
        bind_count=2,
    ),
    Case(
        "a Pending PodGroup is not allocated while enqueue is on",
        nodes=[node("n0")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1, phase="Pending")],
        conf="actions: \"allocate\"\ntiers: [{plugins: [{name: gang}]}]\n".replace("allocate", "enqueue, allocate"),
        binds={"a-0": "n0"},
        phases={"a": "Inqueue"},
    ),
    Case(
        "enqueue refuses a gang bigger than the queue's real capability",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[podgroup("big", 8, phase="Pending", min_cpu="8")],
        phases={"big": "Pending"},
    ),
    Case(
        "overcommit lets 1.2x the cluster be enqueued and no more",
        nodes=[node("n0", "10")],
        pods=[],
        podgroups=[podgroup("a", 1, "Pending", "7"), podgroup("b", 1, "Pending", "5"), podgroup("c", 1, "Pending", "5")],
        conf=OVERCOMMIT_CONF,
        phases={"a": "Inqueue", "b": "Inqueue", "c": "Pending"},
    ),
    Case(
        "taints keep pods off unless tolerated; nodeSelector is honored",
        nodes=[node("tainted", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]), node("plain", labels={"zone": "a"})],
        pods=[
            pod("t-0", "t", tolerations=[{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}], nodeSelector={"gpu": "x"}),
            pod("s-0", "s", nodeSelector={"zone": "a"}),
            pod("u-0", "u", nodeSelector={"zone": "b"}),
        ],
        podgroups=[podgroup("t", 1), podgroup("s", 1), podgroup("u", 1)],
        binds={"s-0": "plain"},
    ),
    Case(
        "an unschedulable node and a full pod count are skipped",
        nodes=[{**node("cordoned"), "spec": {"unschedulable": True}}, node("full", pods="1"), node("ok")],
        pods=[pod("busy", "other", node_name="full", phase="Running"), pod("a-0", "a")],
        podgroups=[podgroup("a", 1)],
        binds={"a-0": "ok"},
    ),
    Case(
        "extended resources must fit",
        nodes=[node("gpu", **{"nvidia.com/gpu": "8"}), node("cpu")],
        pods=[{**pod("g-0", "g"), "spec": {**pod("g-0", "g")["spec"], "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "4"}}}]}}],
        podgroups=[podgroup("g", 1)],
        binds={"g-0": "gpu"},
    ),
    Case(
        "a closed queue allocates nothing",
        nodes=[node("n0")],
        pods=[pod("a-0", "a")],
        podgroups=[podgroup("a", 1)],
        queues=[queue(state="Closed")],
        binds={},
    ),
    Case(
        "running pods count toward a gang: the rest of an elastic job is placed",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[pod("a-0", "a", "2", node_name="n0", phase="Running"), pod("a-1", "a", "2")],
        podgroups=[podgroup("a", 2, phase="Running")],
        binds={"a-1": "n1"},
    ),
    Case(
        "preempt: a high-priority job evicts one pod of a lower-priority one, as far as its gang allows",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), pod("lo-1", "lo", "1", node_name="n0", phase="Running"), pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 1, priority="low"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=["lo-0"],
    ),
    Case(
        "preempt: never below the victim's minAvailable",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), pod("lo-1", "lo", "1", node_name="n0", phase="Running"), pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 2, priority="low"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "preempt: equal priority takes nothing",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), pod("lo-1", "lo", "1", node_name="n0", phase="Running"), pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 1, priority="high"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "preempt: a preemptable=false pod is never a victim",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), {**pod("lo-1", "lo", "1", node_name="n0", phase="Running"), "metadata": {**pod("lo-1", "lo")["metadata"], "labels": {"volcano.sh/preemptable": "false"}}}, pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 1, priority="low"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=["lo-0"],
    ),
    Case(
        "binpack: the fuller node wins over the first by name",
        nodes=[node("n0", "4"), node("n1", "4")],
        pods=[pod("x-0", "x", "2", node_name="n1", phase="Running"), pod("a-0", "a", "1")],
        podgroups=[podgroup("x", 1, phase="Running"), podgroup("a", 1)],
        conf=BINPACK_CONF,
        binds={"a-0": "n1"},
    ),
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


def test_unknown_names_in_the_conf_are_refused_with_every_problem() -> None:
    with pytest.raises(conf.ConfError) as err:
        conf_load.parse("actions: \"enqueue, teleport\"\ntiers: [{plugins: [{name: gang}, {name: magic}]}]")
    text = str(err.value)
    assert "unknown action 'teleport'" in text and "unknown plugin 'magic'" in text


def test_the_scheduler_process_exits_2_on_a_bad_conf(tmp_path: Any) -> None:
    import subprocess
    import sys

    bad = tmp_path / "conf.yaml"
    bad.write_text("actions: \"teleport\"\ntiers: []\n")
    proc = subprocess.run([sys.executable, "-m", "reference_scheduler.scheduler", "--scheduler-conf", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "unknown action 'teleport'" in proc.stderr
