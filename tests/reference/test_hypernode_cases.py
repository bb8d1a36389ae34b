"""HyperNodes in memory: how the tree is resolved (tiers, parents, real nodes by exactMatch,
regexMatch and labelMatch), then scheduling cycles of jobs with a hard or soft network topology
against the binds, PodGroup annotations and conditions Volcano's rules give.

The trees are small copies of the one Volcano's hypernode e2e builds
(test/e2e/hypernode/network_topology_test.go): tier-1 HyperNodes of two nodes, tier-2 over pairs
of those, one tier-3 root."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from reference_scheduler.api import hypernode_members
from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import hyper_node_info, job_info
from reference_scheduler.scheduler.framework import framework
from reference_scheduler.scheduler.plugins import network_topology_aware
from tests.reference import builders
from tests.reference import scheduler_harness as harness
from tests.reference.builders import node, pod, podgroup

CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: network-topology-aware}]
"""
NO_PLUGIN_CONF = CONF.replace(", {name: network-topology-aware}", "")
BINPACK_CONF = CONF.replace("{name: predicates}", "{name: predicates}, {name: binpack}")
ANNOTATION = hyper_node_info.ALLOCATED_HYPERNODE


def hypernode(name: str, tier: int, members: list[str], member_type: str = "Node") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"tier": tier, "members": [{"type": member_type, "selector": {"exactMatch": {"name": m}}} for m in members]}}


def selector_hypernode(name: str, tier: int, selector: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"tier": tier, "members": [{"type": "Node", "selector": selector}]}}


def tree(racks: dict[str, list[str]], spines: dict[str, list[str]] | None = None, root: str = "") -> list[dict[str, Any]]:
    """Tier-1 racks of nodes, tier-2 spines of racks, a tier-3 root over the spines."""
    out = [hypernode(name, 1, nodes) for name, nodes in racks.items()]
    out += [hypernode(name, 2, members, "HyperNode") for name, members in (spines or {}).items()]
    if root:
        out.append(hypernode(root, 3, list(spines or {}), "HyperNode"))
    return out


# The e2e tree: s0..s3 over node pairs, s4 over s0 s1, s5 over s2 s3, s6 over s4 s5.
E2E_TREE = tree({f"s{i}": [f"n{2 * i}", f"n{2 * i + 1}"] for i in range(4)}, {"s4": ["s0", "s1"], "s5": ["s2", "s3"]}, "s6")
EIGHT_NODES = [node(f"n{i}", "4") for i in range(8)]


def topology_podgroup(name: str, min_member: int, mode: str, highest: int | None = None, annotation: str = "") -> dict[str, Any]:
    out = podgroup(name, min_member)
    out["spec"]["networkTopology"] = {"mode": mode} if highest is None else {"mode": mode, "highestTierAllowed": highest}
    if annotation:
        out["metadata"]["annotations"] = {ANNOTATION: annotation}
    return out


def filler(name: str, on: str, cpu: str = "3") -> dict[str, Any]:
    return pod(name, "filler", cpu, node_name=on, phase="Running")


def job_pods(group: str, count: int, cpu: str = "3") -> list[dict[str, Any]]:
    return [pod(f"{group}-{i}", group, cpu) for i in range(count)]


class HyperNodeCache(harness.FakeCache):
    """FakeCache with HyperNode objects and the annotations the cycle writes."""

    def __init__(self, case: Case) -> None:
        super().__init__(case.nodes, case.pods, case.podgroups, [builders.queue()], harness.PRIORITY_CLASSES)
        self.hypernodes = _Objects(case.hypernodes)  # type: ignore[assignment]
        self.annotations: dict[str, dict[str, str]] = {}

    def update_podgroup_annotations(self, job: job_info.JobInfo, annotations: dict[str, str]) -> None:
        self.annotations.setdefault(job.name, {}).update(annotations)


class _Objects:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def snapshot(self) -> list[dict[str, Any]]:
        return self.items


@dataclasses.dataclass
class Case:
    name: str
    nodes: list[dict[str, Any]]
    hypernodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    podgroups: list[dict[str, Any]]
    conf: str = CONF
    # pod -> node; pods not named must stay unbound (fillers are bound already)
    binds: dict[str, str] = dataclasses.field(default_factory=dict)
    # PodGroup -> the HyperNode recorded on it this cycle (absent: none written)
    recorded: dict[str, str] = dataclasses.field(default_factory=dict)
    # PodGroup -> a fragment of its Unschedulable condition's message
    unschedulable: dict[str, str] = dataclasses.field(default_factory=dict)


FOUR_NODES = [node(f"n{i}", "4") for i in range(4)]
TWO_RACKS = tree({"s0": ["n0", "n1"], "s1": ["n2", "n3"]}, {"s2": ["s0", "s1"]})
# Racks whose nodes are not neighbours by name: placing by name order splits a job across them.
CROSSED_RACKS = tree({"s0": ["n0", "n3"], "s1": ["n1", "n2"]}, {"s2": ["s0", "s1"]})

CASES = [
    Case(
        "hard: the job goes whole to the one tier-1 HyperNode with room for it",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n1"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-0": "n2", "j-1": "n3"}, recorded={"j": "s1"},
    ),
    Case(
        "without a topology the same job is split over the racks (first node by name first)",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n1"), *job_pods("j", 2)], [podgroup("j", 2)],
        binds={"j-0": "n0", "j-1": "n2"},
    ),
    Case(
        "hard: the job's HyperNode is chosen in allocate, so it holds without the plugin too",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n1"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        conf=NO_PLUGIN_CONF, binds={"j-0": "n2", "j-1": "n3"}, recorded={"j": "s1"},
    ),
    Case(
        "hard, highestTierAllowed 1: a job needing two tier-1 HyperNodes stays unschedulable",
        FOUR_NODES, TWO_RACKS, job_pods("j", 3), [topology_podgroup("j", 3, "hard", 1)],
        unschedulable={"j": "0/2 nodes are unavailable: 2 Insufficient cpu"},
    ),
    Case(
        "hard, highestTierAllowed 2: the same job runs under the tier-2 HyperNode",
        FOUR_NODES, TWO_RACKS, job_pods("j", 3), [topology_podgroup("j", 3, "hard", 2)],
        binds={"j-0": "n0", "j-1": "n1", "j-2": "n2"}, recorded={"j": "s2"},
    ),
    Case(
        "hard: a missing highestTierAllowed means 1, the CRD's default",
        FOUR_NODES, TWO_RACKS, job_pods("j", 3), [topology_podgroup("j", 3, "hard")],
        unschedulable={"j": "pod group is not ready"},
    ),
    Case(
        "hard: a lower tier is tried first, though the job may span more",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n0"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 2)],
        binds={"j-0": "n2", "j-1": "n3"}, recorded={"j": "s1"},
    ),
    Case(
        "hard, tier 2: the job stays under one tier-2 HyperNode where name order would cross two",
        EIGHT_NODES, E2E_TREE, [filler("f-0", "n0"), filler("f-1", "n1"), filler("f-2", "n2"), *job_pods("j", 3)], [topology_podgroup("j", 3, "hard", 2)],
        binds={"j-0": "n4", "j-1": "n5", "j-2": "n6"}, recorded={"j": "s5"},
    ),
    Case(
        "hard: with room in two tier-1 HyperNodes, the one whose nodes score higher wins (binpack)",
        [node(f"n{i}", "8") for i in range(4)], TWO_RACKS, [filler("f-0", "n2", "2"), filler("f-1", "n3", "2"), *job_pods("j", 2, "2")], [topology_podgroup("j", 2, "hard", 1)],
        conf=BINPACK_CONF, binds={"j-0": "n2", "j-1": "n2"}, recorded={"j": "s1"},
    ),
    Case(
        "hard: a job placed in part grows only where the recorded HyperNode allows",
        FOUR_NODES, TWO_RACKS, [pod("j-0", "j", "3", node_name="n3", phase="Running"), pod("j-1", "j", "3")], [topology_podgroup("j", 2, "hard", 1, annotation="s1")],
        binds={"j-1": "n2"},
    ),
    Case(
        "hard: without a recorded HyperNode the same pod goes to the first rack by name",
        FOUR_NODES, TWO_RACKS, [pod("j-0", "j", "3", node_name="n3", phase="Running"), pod("j-1", "j", "3")], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-1": "n0"}, recorded={"j": "s0"},
    ),
    Case(
        "hard: no HyperNodes at all, no place for the job",
        FOUR_NODES, [], job_pods("j", 2), [topology_podgroup("j", 2, "hard", 1)],
        unschedulable={"j": "pod group is not ready"},
    ),
    Case(
        "hard: a HyperNode with two parents makes the tree not ready; jobs without a topology still run",
        FOUR_NODES, [*TWO_RACKS, hypernode("s3", 2, ["s0"], "HyperNode")], [*job_pods("j", 2), *job_pods("plain", 1, "1")],
        [topology_podgroup("j", 2, "hard", 2), {**podgroup("plain", 1, queue="other")}],
        binds={"plain-0": "n0"},
    ),
    Case(
        "soft: the second pod follows the first into its tier-1 HyperNode",
        FOUR_NODES, CROSSED_RACKS, job_pods("j", 2), [topology_podgroup("j", 2, "soft")],
        binds={"j-0": "n0", "j-1": "n3"}, recorded={"j": "s0"},
    ),
    Case(
        "soft without network-topology-aware: nothing keeps the pods together",
        FOUR_NODES, CROSSED_RACKS, job_pods("j", 2), [topology_podgroup("j", 2, "soft")],
        conf=NO_PLUGIN_CONF, binds={"j-0": "n0", "j-1": "n1"}, recorded={"j": "s2"},
    ),
    Case(
        "soft: with room for one pod per tier-1 HyperNode the job still runs, recorded at tier 2",
        FOUR_NODES, CROSSED_RACKS, [filler("f-0", "n3"), filler("f-1", "n2"), *job_pods("j", 2)], [topology_podgroup("j", 2, "soft")],
        binds={"j-0": "n0", "j-1": "n1"}, recorded={"j": "s2"},
    ),
    Case(
        "soft, three tiers: pods that cannot stay in the first pod's rack go to the nearest rack with room",
        EIGHT_NODES, E2E_TREE, [filler("f-0", "n1"), filler("f-1", "n2"), *job_pods("j", 3)], [topology_podgroup("j", 3, "soft")],
        binds={"j-0": "n0", "j-1": "n3", "j-2": "n4"}, recorded={"j": "s6"},
    ),
    Case(
        "hard: regexMatch members",
        [node("a-0"), node("a-1"), node("b-0"), node("b-1")],
        [selector_hypernode("rack-a", 1, {"regexMatch": {"pattern": "^a-"}}), selector_hypernode("rack-b", 1, {"regexMatch": {"pattern": "^b-"}})],
        [pod("f-0", "filler", "3", node_name="a-1", phase="Running"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-0": "b-0", "j-1": "b-1"}, recorded={"j": "rack-b"},
    ),
    Case(
        "hard: labelMatch members (matchLabels and matchExpressions)",
        [node("n0", labels={"rack": "a"}), node("n1", labels={"rack": "b"}), node("n2", labels={"rack": "a"}), node("n3", labels={"rack": "b"})],
        [selector_hypernode("rack-a", 1, {"labelMatch": {"matchLabels": {"rack": "a"}}}),
         selector_hypernode("rack-b", 1, {"labelMatch": {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["b"]}]}})],
        [pod("f-0", "filler", "3", node_name="n0", phase="Running"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-0": "n1", "j-1": "n3"}, recorded={"j": "rack-b"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hypernode_cycle(case: Case) -> None:
    cache = HyperNodeCache(case)
    if any(pg["spec"].get("queue") == "other" for pg in case.podgroups):
        cache.queues = _Objects([builders.queue(), builders.queue("other")])  # type: ignore[assignment]
    framework.run_cycle(cache, conf_load.parse(case.conf))
    assert cache.binds == case.binds
    assert {pg: a[ANNOTATION] for pg, a in cache.annotations.items()} == case.recorded
    for group, fragment in case.unschedulable.items():
        conditions = {c["type"]: c for c in cache.statuses[group]["conditions"]}
        assert conditions["Unschedulable"]["reason"] == "NotEnoughResources", conditions
        assert fragment in conditions["Unschedulable"]["message"], conditions["Unschedulable"]["message"]


def test_the_recorded_hypernode_is_not_written_again() -> None:
    case = copy.deepcopy(CASES[0])
    case.podgroups[0]["metadata"]["annotations"] = {ANNOTATION: "s1"}
    cache = HyperNodeCache(case)
    framework.run_cycle(cache, conf_load.parse(case.conf))
    assert cache.binds == {"j-0": "n2", "j-1": "n3"} and cache.annotations == {}


# --- the tree ------------------------------------------------------------------------------------

LABELS = {"a-0": {"rack": "a"}, "a-1": {"rack": "a", "gpu": "yes"}, "b-0": {"rack": "b"}}


@pytest.mark.parametrize(("selector", "members"), [
    ({"exactMatch": {"name": "a-0"}}, {"a-0"}),
    ({"exactMatch": {"name": ""}}, set()),
    ({"regexMatch": {"pattern": "^a-"}}, {"a-0", "a-1"}),
    ({"regexMatch": {"pattern": "-0"}}, {"a-0", "b-0"}),  # found anywhere in the name, as Go's MatchString
    ({"regexMatch": {"pattern": "("}}, set()),
    ({"labelMatch": {"matchLabels": {"rack": "a"}}}, {"a-0", "a-1"}),
    ({"labelMatch": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}, {"a-1"}),
    ({"labelMatch": {"matchExpressions": [{"key": "rack", "operator": "NotIn", "values": ["a"]}]}}, {"b-0"}),
    ({"labelMatch": {}}, set()),
    ({"exactMatch": {"name": "b-0"}, "regexMatch": {"pattern": "^a-0$"}}, {"a-0", "b-0"}),
])
def test_members_of_a_node_selector(selector: dict[str, Any], members: set[str]) -> None:
    assert hypernode_members.members_of(selector, LABELS) == members


def _built(objects: list[dict[str, Any]], nodes: list[str]) -> hyper_node_info.HyperNodesInfo:
    return hyper_node_info.build({o["metadata"]["name"]: o for o in objects}, {n: {} for n in nodes})


def test_the_e2e_tree_resolves_tiers_parents_nodes_and_common_ancestors() -> None:
    info = _built(E2E_TREE, [f"n{i}" for i in range(8)])
    assert info.ready and info.tiers == [1, 2, 3]
    assert info.by_tier == {1: ["s0", "s1", "s2", "s3"], 2: ["s4", "s5"], 3: ["s6"]}
    assert info.nodes("s5") == {"n4", "n5", "n6", "n7"} and len(info.nodes("s6")) == 8
    assert info.hypernode_of_node("n3") == "s1" and info.hypernode_of_node("elsewhere") == ""
    assert info.ancestors("s2") == ["s2", "s5", "s6"]
    assert (info.lca("s0", "s1"), info.lca("s0", "s3"), info.lca("s2", "s2"), info.lca("s0", "gone")) == ("s4", "s6", "s2", "")


def test_members_that_do_not_exist_are_left_out() -> None:
    info = _built([hypernode("r", 1, ["n0", "ghost"]), hypernode("top", 2, ["r", "missing"], "HyperNode")], ["n0"])
    assert info.ready and info.nodes("r") == {"n0"} and info.nodes("top") == {"n0"}


@pytest.mark.parametrize(("objects", "problem"), [
    ([hypernode("r", 1, ["n0"]), hypernode("p", 2, ["r"], "HyperNode"), hypernode("q", 2, ["r"], "HyperNode")], "HyperNode r already has a parent p, and cannot set another parent q"),
    ([hypernode("x", 2, ["y"], "HyperNode"), hypernode("y", 3, ["x"], "HyperNode")], "cyclic dependency"),
])
def test_an_inconsistent_tree_is_not_ready(objects: list[dict[str, Any]], problem: str) -> None:
    info = _built(objects, ["n0"])
    assert not info.ready and any(problem in p for p in info.problems), info.problems


@pytest.mark.parametrize(("hypernode_name", "allocated", "score"), [
    ("s0", "s0", 100.0),   # the same rack
    ("s1", "s0", 50.0),    # common ancestor s4, tier 2 of 1..3
    ("s3", "s0", 0.0),     # common ancestor s6, the top tier
    ("", "s0", 0.0),       # a node under no HyperNode
])
def test_tier_scores(hypernode_name: str, allocated: str, score: float) -> None:
    info = _built(E2E_TREE, [f"n{i}" for i in range(8)])
    assert network_topology_aware.tier_score(info, hypernode_name, allocated) == score


def test_the_network_topology_of_a_job_takes_the_crd_defaults() -> None:
    job = job_info.JobInfo("ns/j", "j", "ns", "default", 1, {}, topology_podgroup("j", 1, "soft"))
    assert hyper_node_info.network_topology(job) == hyper_node_info.NetworkTopology("soft", 1)
    job.podgroup["spec"]["networkTopology"] = {}
    assert hyper_node_info.network_topology(job) == hyper_node_info.NetworkTopology("hard", 1)
    del job.podgroup["spec"]["networkTopology"]
    assert hyper_node_info.network_topology(job) is None


def test_hypernode_order_scores_rank_the_candidates() -> None:
    """A plugin's `hyperNodeOrder` scores are added to the node scores when allocate ranks the
    HyperNodes that hold a hard job (no upstream plugin registers one in v1.13; the point is there)."""
    from reference_scheduler.scheduler.actions import allocate

    case = Case("", FOUR_NODES, TWO_RACKS, job_pods("j", 2), [topology_podgroup("j", 2, "hard", 1)])
    cache = HyperNodeCache(case)
    ssn = framework.open_session(cache, conf_load.parse(CONF))
    seen: list[dict[str, list[str]]] = []

    def prefer_s1(job: job_info.JobInfo, candidates: dict[str, list[str]]) -> dict[str, float]:
        seen.append(candidates)
        return {"s1": 10.0}

    ssn.add_hyper_node_order_fn("gang", prefer_s1)
    allocate.Allocate().execute(ssn)
    assert cache.binds == {"j-0": "n2", "j-1": "n3"}
    assert seen == [{"s0": ["n0", "n1"], "s1": ["n2", "n3"]}]
