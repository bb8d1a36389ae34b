"""task-topology on in-memory snapshots: a job's kinds of task placed by their affinity,
anti-affinity and task order annotations, each case with a twin that shows the plugin at work.

Upstream: pkg/scheduler/plugins/task-topology/topology.go."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reference.builders import node, podgroup, queue, task_pod, with_meta
from tests.reference.scheduler_harness import Case, FakeCache, run_case

TOPOLOGY_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: task-topology}]
"""
NO_TOPOLOGY_CONF = TOPOLOGY_CONF.replace(", {name: task-topology}", "")


def topology(name: str, min_member: int, **keys: str) -> dict[str, Any]:
    prefix = "volcano.sh/task-topology-"
    return with_meta(podgroup(name, min_member), annotations={prefix + k.replace("_", "-"): v for k, v in keys.items()})


CASES = [
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
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)


def test_task_topology_batch_score_covers_every_node_at_once() -> None:
    """TaskTopology.score(task, nodes) is the batch form of its node order: one score per node."""
    from reference_scheduler.scheduler import conf_load
    from reference_scheduler.scheduler.framework import framework

    pods = [task_pod("j-ps-0", "j", "ps"), task_pod("j-worker-0", "j", "worker"), task_pod("j-worker-1", "j", "worker")]
    cache = FakeCache([node("alpha", "2"), node("omega", "4"), node("tiny", "500m")], pods, [topology("j", 3, affinity="ps,worker")], [queue()])
    ssn = framework.open_session(cache, conf_load.parse(TOPOLOGY_CONF))
    plugin = ssn.plugins["task-topology"]
    ps = next(t for t in ssn.jobs["ns/j"].tasks.values() if t.role == "ps")
    # alpha holds two of the bucket's three (2 of 3 -> 66.7), omega all (100), tiny not even ps (0).
    assert plugin.score(ps, ssn.node_list()) == pytest.approx([200 / 3, 100.0, 0.0])
