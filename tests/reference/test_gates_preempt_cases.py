"""Scheduling gates, task priority, who may be a victim (the preemptable label, the conformance
and pdb plugins), shuffle, and preempt's topology-aware variant, on in-memory snapshots (issue
19's scheduler rules; the scenarios prove the same against an API server)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference_scheduler.scheduler import conf, conf_load, features
from reference_scheduler.scheduler.api import job_info
from tests.reference.builders import node, pod, podgroup
from tests.reference.scheduler_harness import Case, run_case

ALLOCATE_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}]
"""
ENQUEUE_CONF = """
actions: "enqueue"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}]
"""
PREEMPT_CONF = """
actions: "allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}]
"""
TOPOLOGY_PREEMPT_CONF = PREEMPT_CONF + """
configurations:
- name: preempt
  arguments: {enableTopologyAwarePreemption: true}
"""
PDB_PREEMPT_CONF = """
actions: "allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: pdb}]
- plugins: [{name: predicates}]
"""
SHUFFLE_CONF = """
actions: "allocate, shuffle"
tiers:
- plugins: [{name: gang}, {name: pdb}]
- plugins: [{name: predicates}]
"""
HOSTNAME = "kubernetes.io/hostname"


def gated(p: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    return out


def with_meta(p: dict[str, Any], labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"].setdefault("labels", {}).update(labels or {})
    out["metadata"]["annotations"].update(annotations or {})
    return out


def running(name: str, group: str, node_name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return pod(name, group, cpu, node_name=node_name, phase="Running", **spec)


def host(name: str, cpu: str = "2") -> dict[str, Any]:
    return node(name, cpu, labels={HOSTNAME: name})


def anti_affinity(app: str) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}]}}


def budget(name: str, app: str, allowed: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"selector": {"matchLabels": {"app": app}}}, "status": {"disruptionsAllowed": allowed}}


LOW_ON_BOTH = [with_meta(running(f"low-{i}", "low", f"n{i // 2}"), {"app": "web"}) for i in range(4)]

CASES = [
    Case(
        "a gated gang is not placed and is Unschedulable",
        nodes=[node("n0", "4")],
        pods=[gated(pod("g-0", "g")), gated(pod("g-1", "g"))],
        podgroups=[podgroup("g", 2, min_cpu="2")],
        conf=ALLOCATE_CONF,
        binds={},
        conditions={"g": ("Unschedulable", "NotEnoughResources", "2/2 tasks in gang unschedulable")},
    ),
    Case(
        "once its gates are gone the same gang is placed",
        nodes=[node("n0", "4")],
        pods=[pod("g-0", "g"), pod("g-1", "g")],
        podgroups=[podgroup("g", 2, min_cpu="2")],
        conf=ALLOCATE_CONF,
        binds={"g-0": "n0", "g-1": "n0"},
    ),
    Case(
        "with the gates rule switched off a gated gang is placed (the broken build)",
        nodes=[node("n0", "4")],
        pods=[gated(pod("g-0", "g")), gated(pod("g-1", "g"))],
        podgroups=[podgroup("g", 2, min_cpu="2")],
        conf=ALLOCATE_CONF,
        disabled=frozenset({"scheduling-gates"}),
        binds={"g-0": "n0", "g-1": "n0"},
    ),
    Case(
        "an Inqueue job's gated pods hold no overcommit room: the next job is enqueued",
        nodes=[node("n0", "4")],
        pods=[gated(pod(f"g-{i}", "g")) for i in range(4)],
        podgroups=[podgroup("g", 4, min_cpu="4"), podgroup("next", 2, phase="Pending", min_cpu="2")],
        conf=ENQUEUE_CONF,
        phases={"next": "Inqueue"},
    ),
    Case(
        "ungated, the same Inqueue job holds its minimum: the next job waits",
        nodes=[node("n0", "4")],
        pods=[pod(f"g-{i}", "g") for i in range(4)],
        podgroups=[podgroup("g", 4, min_cpu="4"), podgroup("next", 2, phase="Pending", min_cpu="2")],
        conf=ENQUEUE_CONF,
        phases={"next": "Pending"},
    ),
    Case(
        "a gated preemptor evicts nobody",
        nodes=[node("n0", "2")],
        pods=[running("low-0", "low", "n0"), running("low-1", "low", "n0"), gated(pod("high-0", "high"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "the higher-priority task of a job is placed first (priority's task order)",
        nodes=[node("n0", "2")],
        pods=[pod("j-first-0", "j", priority=10), pod("j-first-1", "j", priority=10), pod("j-second-0", "j", priority=100), pod("j-second-1", "j", priority=100)],
        podgroups=[podgroup("j", 2)],
        conf=ALLOCATE_CONF,
        binds={"j-second-0": "n0", "j-second-1": "n0"},
    ),
    Case(
        "the volcano.sh/task-priority annotation outranks the pod's priority",
        nodes=[node("n0", "1")],
        pods=[pod("j-a-0", "j", priority=100), with_meta(pod("j-b-0", "j", priority=10), annotations={job_info.TASK_PRIORITY_KEY: "1000"})],
        podgroups=[podgroup("j", 1)],
        conf=ALLOCATE_CONF,
        binds={"j-b-0": "n0"},
    ),
    Case(
        "a pod labelled volcano.sh/preemptable false is no victim: the other node's pod goes",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[*(with_meta(running(f"keep-{i}", "keep", "n0"), {job_info.PREEMPTABLE_KEY: "false"}) for i in range(2)), *(running(f"plain-{i}", "plain", "n1") for i in range(2)), pod("high-0", "high")],
        podgroups=[podgroup("keep", 1, phase="Running", priority="low"), podgroup("plain", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        evictions=["plain-0"],
        binds={},
    ),
    Case(
        "with the label rule switched off the first node's pod goes (the broken build)",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[*(with_meta(running(f"keep-{i}", "keep", "n0"), {job_info.PREEMPTABLE_KEY: "false"}) for i in range(2)), *(running(f"plain-{i}", "plain", "n1") for i in range(2)), pod("high-0", "high")],
        podgroups=[podgroup("keep", 1, phase="Running", priority="low"), podgroup("plain", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        disabled=frozenset({"preemptable-label"}),
        evictions=["keep-0"],
        binds={},
    ),
    Case(
        "conformance keeps a system-cluster-critical pod from being a victim",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[*(running(f"crit-{i}", "crit", "n0", priorityClassName="system-cluster-critical") for i in range(2)), *(running(f"plain-{i}", "plain", "n1") for i in range(2)), pod("high-0", "high")],
        podgroups=[podgroup("crit", 1, phase="Running", priority="low"), podgroup("plain", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        evictions=["plain-0"],
        binds={},
    ),
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
    Case(
        "topology-aware preemption empties a node of the pods the preemptor's anti-affinity repels",
        nodes=[host("n0"), host("n1")],
        pods=[*LOW_ON_BOTH, pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=TOPOLOGY_PREEMPT_CONF,
        # Both web pods of the first node, the later one first (the reverse of task order).
        evictions=["low-1", "low-0"],
        binds={},
    ),
    Case(
        "normal preemption evicts only for room although the anti-affinity still fails there",
        nodes=[host("n0"), host("n1")],
        pods=[*LOW_ON_BOTH, pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        evictions=["low-1"],
        binds={},
    ),
    Case(
        "with the rule switched off the argument is ignored (the broken build)",
        nodes=[host("n0"), host("n1")],
        pods=[*LOW_ON_BOTH, pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=TOPOLOGY_PREEMPT_CONF,
        disabled=frozenset({"topology-aware-preemption"}),
        evictions=["low-1"],
        binds={},
    ),
    Case(
        "topology-aware preemption reprieves the victims the preemptor can live beside",
        nodes=[host("n0", "3")],
        pods=[with_meta(running("low-0", "low", "n0"), {"app": "web"}), running("low-1", "low", "n0"), running("low-2", "low", "n0"), pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=TOPOLOGY_PREEMPT_CONF,
        # The web pod must go (anti-affinity); it also frees the CPU, so the others stay.
        evictions=["low-0"],
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cycle(case: Case) -> None:
    run_case(case)


def test_action_arguments_are_read_by_type_as_upstream() -> None:
    parsed = conf_load.parse(TOPOLOGY_PREEMPT_CONF)
    assert parsed.action_argument("preempt", "enableTopologyAwarePreemption", False) is True
    # A string "true" is not a bool: ignored, as upstream's Arguments.GetBool ignores it.
    quoted = conf_load.parse(PREEMPT_CONF + "configurations:\n- name: preempt\n  arguments: {enableTopologyAwarePreemption: 'true'}\n")
    assert quoted.action_argument("preempt", "enableTopologyAwarePreemption", False) is False
    with pytest.raises(conf.ConfError, match="configurations"):
        conf_load.parse(PREEMPT_CONF + "configurations: [just-a-string]\n")


def test_the_scheduler_refuses_an_unknown_rule_to_disable(tmp_path: Any) -> None:
    import subprocess
    import sys

    conf_file = tmp_path / "conf.yaml"
    conf_file.write_text(PREEMPT_CONF)
    proc = subprocess.run([sys.executable, "-m", "reference_scheduler.scheduler", "--scheduler-conf", str(conf_file), "--disable", "gravity"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--disable gravity: unknown" in proc.stderr and "scheduling-gates" in proc.stderr


def test_features_without_switches_off_only_what_is_named() -> None:
    switched = features.Features.without({"scheduling-gates"})
    assert not switched.scheduling_gates and switched.topology_aware_preemption and switched.preemptable_label
