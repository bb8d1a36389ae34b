"""In-memory cases for the numa-aware plugin: nodes and Numatopologies come from device profiles
(the very objects fake_devices advertises), pods are Guaranteed unless a case says otherwise,
and each case runs one allocate cycle, or several in a row to show CPUs remembered between
cycles. The hints and policies are also checked on their own, against the kubelet's rules."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from fake_devices import advertise, profile
from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework
from reference_scheduler.scheduler.plugins import (
    numa_aware,
    numa_aware_hints,
    numa_aware_topology,
)
from tests.reference import builders
from tests.reference import scheduler_harness as harness

NUMA_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: numa-aware}]
"""
NO_NUMA_CONF = NUMA_CONF.replace(", {name: numa-aware}", "")
SNN, RESTRICTED, BEST_EFFORT = "single-numa-node", "restricted", "best-effort"


def group(prefix: str, cpus_per_numa: int, policy: str, numa: int = 2, cpu_manager: str = "static", reserved: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {
        "prefix": prefix,
        "numa": [{"cpus": cpus_per_numa, "memory": "64Gi"}] * numa,
        "kubelet": {"cpuManagerPolicy": cpu_manager, "topologyManagerPolicy": policy},
    }
    if reserved:
        out["reserved"] = {"cpu": reserved}
    return out


def cluster(*groups: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Nodes and Numatopologies a profile of these node groups advertises."""
    prof = profile.from_document({"name": "numa-case", "nodes": list(groups)})
    nodes = [advertise.node_manifest(advertise.node(prof, n)) for n in prof.nodes]
    return nodes, [o for o in advertise.objects(prof) if o["kind"] == "Numatopology"]


def gpod(name: str, cpu: str, policy: str = "", guaranteed: bool = True, node_name: str = "", phase: str = "Pending", **spec: Any) -> dict[str, Any]:
    """A pod of its own PodGroup (named after the pod) asking for `cpu` and 1Gi; Guaranteed: the
    limits equal the requests."""
    out = builders.pod(name, name, cpu, node_name=node_name, phase=phase, **spec)
    resources = {"requests": {"cpu": cpu, "memory": "1Gi"}}
    if guaranteed:
        resources["limits"] = dict(resources["requests"])
    out["spec"]["containers"] = [{"name": "main", "resources": resources}]
    if policy:
        out["metadata"]["annotations"][numa_aware_topology.POLICY_ANNOTATION] = policy
    return out


@dataclasses.dataclass
class NumaCase:
    name: str
    groups: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    binds: dict[str, str]
    conf: str = NUMA_CONF
    plain_nodes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # pod -> fragments its PodGroup's Unschedulable message must contain
    refusals: dict[str, list[str]] = dataclasses.field(default_factory=dict)


def run(groups: list[dict[str, Any]], pods: list[dict[str, Any]], configuration: str = NUMA_CONF, plain_nodes: list[dict[str, Any]] | None = None, cache: harness.FakeCache | None = None) -> harness.FakeCache:
    nodes, topologies = cluster(*groups)
    podgroups = [builders.podgroup(p["metadata"]["annotations"][job_info.GROUP_NAME_ANNOTATION], 1) for p in pods if not p["spec"].get("nodeName")]
    fresh = harness.FakeCache((plain_nodes or []) + nodes, pods, podgroups, [builders.queue()], harness.PRIORITY_CLASSES)
    fresh.numatopologies.items = topologies  # type: ignore[attr-defined]
    if cache is not None:
        fresh.cpu_assignments = cache.cpu_assignments
    framework.run_cycle(fresh, conf_load.parse(configuration))
    return fresh


CASES = [
    NumaCase(
        "single-numa-node: refused where the CPUs would straddle, placed where one NUMA node holds them",
        groups=[group("alpha", 12, SNN), group("beta", 24, SNN)],
        pods=[gpod("p", "16", SNN)],
        binds={"p": "beta-0"},
    ),
    NumaCase(
        "without numa-aware the same pod goes to the first node by name",
        groups=[group("alpha", 12, SNN), group("beta", 24, SNN)],
        pods=[gpod("p", "16", SNN)],
        binds={"p": "alpha-0"},
        conf=NO_NUMA_CONF,
    ),
    NumaCase(
        "single-numa-node: CPUs placed earlier in the session count; the third pod finds no NUMA node",
        groups=[group("beta", 24, SNN)],
        pods=[gpod(f"p{i}", "16", SNN) for i in range(3)],
        binds={"p0": "beta-0", "p1": "beta-0"},
        refusals={"p2": ["1 container main cannot be assigned by numa"]},
    ),
    NumaCase(
        "single-numa-node: a pod larger than any NUMA node is refused; restricted admits it on the fewest NUMA nodes",
        groups=[group("rest", 16, RESTRICTED), group("snn", 16, SNN)],
        pods=[gpod("wide", "24", RESTRICTED), gpod("single", "24", SNN)],
        binds={"wide": "rest-0"},
        refusals={"single": ["container main cannot be assigned by numa", "task topology policy[single-numa-node] is different with node[restricted]"]},
    ),
    NumaCase(
        "restricted: refused when the free CPUs are split although one NUMA node could hold the pod",
        groups=[group("rest", 16, RESTRICTED)],
        pods=[gpod(f"p{i}", "10", RESTRICTED) for i in range(3)],
        binds={"p0": "rest-0", "p1": "rest-0"},
        refusals={"p2": ["container main cannot be assigned by numa"]},
    ),
    NumaCase(
        "best-effort: the same split CPUs are admitted",
        groups=[group("be", 16, BEST_EFFORT)],
        pods=[gpod(f"p{i}", "10", BEST_EFFORT) for i in range(3)],
        binds={"p0": "be-0", "p1": "be-0", "p2": "be-0"},
    ),
    NumaCase(
        "best-effort: the node where the pod spans one NUMA node scores above one where it spans two",
        groups=[group("narrow", 8, BEST_EFFORT), group("wide", 16, BEST_EFFORT)],
        pods=[gpod("p", "10", BEST_EFFORT)],
        binds={"p": "wide-0"},
    ),
    NumaCase(
        "policy none (or none at all) is judged by the node's kubelet policy, and not where that is none",
        groups=[group("alpha", 12, SNN), group("beta", 24, "none")],
        pods=[gpod("none", "16", "none"), gpod("unset", "16")],
        binds={"none": "beta-0", "unset": "beta-0"},
    ),
    NumaCase(
        "a policy must match the node's: each other node is refused with its reason",
        groups=[group("be", 16, BEST_EFFORT), group("nocm", 16, SNN, cpu_manager="none"), group("snn", 16, SNN)],
        plain_nodes=[builders.node("plain-0", "32")],
        pods=[gpod("snn", "4", SNN), gpod("restricted", "4", RESTRICTED)],
        binds={"snn": "snn-0"},
        refusals={"restricted": [
            "0/4 nodes are unavailable",
            "1 cpu manager policy isn't static",
            "1 numa info is empty",
            "1 task topology policy[restricted] is different with node[best-effort]",
            "1 task topology policy[restricted] is different with node[single-numa-node]",
        ]},
    ),
    NumaCase(
        "a Burstable pod is not judged: it may straddle NUMA nodes",
        groups=[group("alpha", 12, SNN)],
        pods=[gpod("p", "16", SNN, guaranteed=False)],
        binds={"p": "alpha-0"},
    ),
    NumaCase(
        "a Guaranteed pod asking for a fraction of a CPU gets no exclusive CPUs and is admitted",
        groups=[group("alpha", 12, SNN)],
        pods=[gpod("p", "15500m", SNN)],
        binds={"p": "alpha-0"},
    ),
    NumaCase(
        "the reserved CPUs are never handed out: 14 left on NUMA node 0 cannot take 16",
        groups=[group("res", 16, SNN, reserved=2)],
        pods=[gpod("p0", "16", SNN), gpod("p1", "14", SNN)],
        binds={"p0": "res-0", "p1": "res-0"},
    ),
    NumaCase(
        "the reserved CPUs are never handed out: a second 15-CPU pod finds 14 and 1 free",
        groups=[group("res", 16, SNN, reserved=2)],
        pods=[gpod("p0", "15", SNN), gpod("p1", "15", SNN)],
        binds={"p0": "res-0"},
        refusals={"p1": ["container main cannot be assigned by numa"]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_numa_cycle(case: NumaCase) -> None:
    cache = run(case.groups, case.pods, case.conf, case.plain_nodes)
    assert cache.binds == case.binds
    for pod, fragments in case.refusals.items():
        conditions = {c["type"]: c for c in cache.statuses[pod]["conditions"]}
        message = conditions["Unschedulable"]["message"]
        for fragment in fragments:
            assert fragment in message, message


def bound(pod: dict[str, Any], node: str, phase: str = "Running") -> dict[str, Any]:
    out = copy.deepcopy(pod)
    out["spec"]["nodeName"], out["status"]["phase"] = node, phase
    return out


def test_cpus_given_in_an_earlier_cycle_stay_taken_until_the_pod_ends() -> None:
    groups = [group("beta", 24, SNN)]
    first = run(groups, [gpod("p0", "16", SNN)])
    assert first.binds == {"p0": "beta-0"}
    p0 = bound(gpod("p0", "16", SNN), "beta-0")
    second = run(groups, [p0, gpod("p1", "16", SNN)], cache=first)
    assert second.binds == {"p1": "beta-0"}
    p1 = bound(gpod("p1", "16", SNN), "beta-0")
    third = run(groups, [p0, p1, gpod("p2", "16", SNN)], cache=second)
    assert third.binds == {}, "both NUMA nodes hold a 16-CPU pod: 8 free on each"
    # p0 succeeds: the kubelet frees its CPUs, and the kit forgets them.
    ended = run(groups, [bound(p0, "beta-0", "Succeeded"), p1, gpod("p2", "16", SNN)], cache=third)
    assert ended.binds == {"p2": "beta-0"}
    assert set(ended.cpu_assignments) == {"uid-p1", "uid-p2"}


def test_pods_the_scheduler_did_not_place_hold_cpus_as_the_kubelet_gives_them() -> None:
    groups = [group("beta", 24, SNN)]
    others = [bound(gpod(f"o{i}", "16"), "beta-0") for i in range(2)]
    cache = run(groups, others + [gpod("p", "16", SNN)])
    assert cache.binds == {}
    assert {uid for uid in cache.cpu_assignments} == {"uid-o0", "uid-o1"}
    numa = [{cpu // 24 for cpu in cpus} for _, cpus in cache.cpu_assignments.values()]
    assert sorted(map(sorted, numa)) == [[0], [1]]


def test_a_discarded_gang_gives_its_cpus_back() -> None:
    """A gang of three that cannot all fit is discarded: its CPUs are free for the next job."""
    nodes, topologies = cluster(group("beta", 24, SNN))
    gang = [gpod(f"g{i}", "16", SNN) for i in range(3)]
    for pod in gang:
        pod["metadata"]["annotations"][job_info.GROUP_NAME_ANNOTATION] = "g"
    later = gpod("solo", "20", SNN)
    later["metadata"]["creationTimestamp"] = "2026-01-02T00:00:00Z"
    solo_group = builders.podgroup("solo", 1)
    solo_group["metadata"]["creationTimestamp"] = "2026-01-02T00:00:00Z"
    cache = harness.FakeCache(nodes, gang + [later], [builders.podgroup("g", 3), solo_group], [builders.queue()], harness.PRIORITY_CLASSES)
    cache.numatopologies.items = topologies  # type: ignore[attr-defined]
    framework.run_cycle(cache, conf_load.parse(NUMA_CONF))
    assert cache.binds == {"solo": "beta-0"}
    assert set(cache.cpu_assignments) == {"uid-solo"}


# --- the hints and policies on their own ------------------------------------------------------------
def topo(cpus_per_numa: int = 16, numa: int = 2, reserved: int = 0) -> numa_aware_topology.NodeTopology:
    _, objs = cluster(group("n", cpus_per_numa, SNN, numa=numa, reserved=reserved))
    return numa_aware_topology.read(objs[0])


def test_hints_prefer_the_fewest_numa_nodes_that_could_ever_hold_the_request() -> None:
    t = topo()
    H = numa_aware_hints.Hint
    assert numa_aware_hints.cpu_hints(t, frozenset(range(32)), 10) == [H(0b01, True), H(0b10, True), H(0b11, False)]
    # Split free CPUs: only both NUMA nodes hold 10, and that is not preferred (one could).
    split = frozenset(range(10, 16)) | frozenset(range(26, 32))
    assert numa_aware_hints.cpu_hints(t, split, 10) == [H(0b11, False)]
    # Larger than a NUMA node: both together are the fewest possible, so preferred.
    assert numa_aware_hints.cpu_hints(t, frozenset(range(32)), 20) == [H(0b11, True)]
    assert numa_aware_hints.cpu_hints(t, frozenset(range(8)), 10) == []


@pytest.mark.parametrize(
    ("policy", "hints", "admitted", "mask"),
    [
        (BEST_EFFORT, [numa_aware_hints.Hint(0b11, False)], True, 0b11),
        (RESTRICTED, [numa_aware_hints.Hint(0b11, False)], False, 0b11),
        (SNN, [numa_aware_hints.Hint(0b11, False)], False, 0b11),
        (RESTRICTED, [numa_aware_hints.Hint(0b11, True)], True, 0b11),
        (SNN, [numa_aware_hints.Hint(0b11, True)], False, 0b11),
        (SNN, [numa_aware_hints.Hint(0b01, True), numa_aware_hints.Hint(0b10, True)], True, 0b01),
        (SNN, [numa_aware_hints.Hint(0b10, True), numa_aware_hints.Hint(0b01, True)], True, 0b01),
        (BEST_EFFORT, [], True, 0b11),
        (RESTRICTED, [], False, 0b11),
        (SNN, None, True, 0b11),
        ("none", [], True, None),
    ],
)
def test_policies_choose_and_admit_as_the_topology_manager(policy: str, hints: list[numa_aware_hints.Hint] | None, admitted: bool, mask: int | None) -> None:
    best, admit = numa_aware_hints.judge(policy, [0, 1], hints)
    assert (admit, best.mask) == (admitted, mask)


def test_cpus_are_taken_from_the_hinted_numa_node_and_packed() -> None:
    t = topo()
    assert numa_aware_hints.reserved(topo(reserved=2)) == frozenset({0, 1})
    hint = numa_aware_hints.Hint(0b10, True)
    assert numa_aware_hints.allocate(t, hint, frozenset(range(32)), 4) == frozenset({16, 17, 18, 19})
    # Whole free socket first, then the fuller socket's CPUs.
    taken = numa_aware_hints.allocate(t, numa_aware_hints.Hint(0b11, True), frozenset(range(4, 32)), 20)
    assert taken >= frozenset(range(16, 32)) and len(taken) == 20
    assert numa_aware_hints.take_by_topology(t, frozenset(range(3)), 4) is None


@pytest.mark.parametrize(
    ("containers", "guaranteed"),
    [
        ([{"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}], True),
        ([{"requests": {"cpu": "2000m", "memory": "1024Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}}], True),
        ([{"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}], False),
        ([{"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}], False),
        ([{}], False),
    ],
)
def test_qos_class(containers: list[dict[str, Any]], guaranteed: bool) -> None:
    pod = {"spec": {"containers": [{"name": "c", "resources": r} for r in containers]}}
    assert numa_aware_topology.is_guaranteed(pod) is guaranteed
    assert numa_aware_topology.is_guaranteed({**pod, "status": {"qosClass": "Guaranteed"}}) is True


def test_the_weight_argument_scales_the_score_and_a_bad_one_means_1() -> None:
    assert numa_aware.NumaAware({"weight": 10}).weight == 10
    assert numa_aware.NumaAware({"weight": "x"}).weight == 1
