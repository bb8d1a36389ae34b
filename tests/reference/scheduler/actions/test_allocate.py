"""The allocate action on in-memory snapshots: a gated pod is not placed (its gang stays
Unschedulable) until its scheduling gates are gone; and a job with a hard network topology goes
whole under one HyperNode, tried from the lowest tier up to its highestTierAllowed (the HyperNode
cycles' harness is hypernode_harness.py).

Upstream: pkg/scheduler/actions/allocate/allocate.go (allocateResourceForTasksWithTopology,
selectBestHyperNode)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework
from tests.reference.builders import (
    gated,
    hypernode,
    node,
    pod,
    podgroup,
    selector_hypernode,
    topology_podgroup,
)
from tests.reference.scheduler import hypernode_harness
from tests.reference.scheduler.hypernode_harness import (
    ANNOTATION,
    BINPACK_CONF,
    CONF,
    E2E_TREE,
    EIGHT_NODES,
    FOUR_NODES,
    NO_PLUGIN_CONF,
    TWO_RACKS,
    HyperNodeCache,
    HyperNodeCase,
    filler,
    job_pods,
)
from tests.reference.scheduler_harness import GANG_CONF, Case, run_case

# Scheduling gates (issue 19).
CASES = [
    Case(
        "a gated gang is not placed and is Unschedulable",
        nodes=[node("n0", "4")],
        pods=[gated(pod("g-0", "g")), gated(pod("g-1", "g"))],
        podgroups=[podgroup("g", 2, min_cpu="2")],
        conf=GANG_CONF,
        binds={},
        conditions={"g": ("Unschedulable", "NotEnoughResources", "2/2 tasks in gang unschedulable")},
    ),
    Case(
        "once its gates are gone the same gang is placed",
        nodes=[node("n0", "4")],
        pods=[pod("g-0", "g"), pod("g-1", "g")],
        podgroups=[podgroup("g", 2, min_cpu="2")],
        conf=GANG_CONF,
        binds={"g-0": "n0", "g-1": "n0"},
    ),
    Case(
        "with the gates rule switched off a gated gang is placed (the broken build)",
        nodes=[node("n0", "4")],
        pods=[gated(pod("g-0", "g")), gated(pod("g-1", "g"))],
        podgroups=[podgroup("g", 2, min_cpu="2")],
        conf=GANG_CONF,
        disabled=frozenset({"scheduling-gates"}),
        binds={"g-0": "n0", "g-1": "n0"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cycle(case: Case) -> None:
    run_case(case)


# --- hard network topologies ---------------------------------------------------------------------
HYPERNODE_CASES = [
    HyperNodeCase(
        "hard: the job goes whole to the one tier-1 HyperNode with room for it",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n1"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-0": "n2", "j-1": "n3"}, recorded={"j": "s1"},
    ),
    HyperNodeCase(
        "without a topology the same job is split over the racks (first node by name first)",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n1"), *job_pods("j", 2)], [podgroup("j", 2)],
        binds={"j-0": "n0", "j-1": "n2"},
    ),
    HyperNodeCase(
        "hard: the job's HyperNode is chosen in allocate, so it holds without the plugin too",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n1"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        conf=NO_PLUGIN_CONF, binds={"j-0": "n2", "j-1": "n3"}, recorded={"j": "s1"},
    ),
    HyperNodeCase(
        "hard, highestTierAllowed 1: a job needing two tier-1 HyperNodes stays unschedulable",
        FOUR_NODES, TWO_RACKS, job_pods("j", 3), [topology_podgroup("j", 3, "hard", 1)],
        unschedulable={"j": "0/2 nodes are unavailable: 2 Insufficient cpu"},
    ),
    HyperNodeCase(
        "hard, highestTierAllowed 2: the same job runs under the tier-2 HyperNode",
        FOUR_NODES, TWO_RACKS, job_pods("j", 3), [topology_podgroup("j", 3, "hard", 2)],
        binds={"j-0": "n0", "j-1": "n1", "j-2": "n2"}, recorded={"j": "s2"},
    ),
    HyperNodeCase(
        "hard: a missing highestTierAllowed means 1, the CRD's default",
        FOUR_NODES, TWO_RACKS, job_pods("j", 3), [topology_podgroup("j", 3, "hard")],
        unschedulable={"j": "pod group is not ready"},
    ),
    HyperNodeCase(
        "hard: a lower tier is tried first, though the job may span more",
        FOUR_NODES, TWO_RACKS, [filler("f-0", "n0"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 2)],
        binds={"j-0": "n2", "j-1": "n3"}, recorded={"j": "s1"},
    ),
    HyperNodeCase(
        "hard, tier 2: the job stays under one tier-2 HyperNode where name order would cross two",
        EIGHT_NODES, E2E_TREE, [filler("f-0", "n0"), filler("f-1", "n1"), filler("f-2", "n2"), *job_pods("j", 3)], [topology_podgroup("j", 3, "hard", 2)],
        binds={"j-0": "n4", "j-1": "n5", "j-2": "n6"}, recorded={"j": "s5"},
    ),
    HyperNodeCase(
        "hard: with room in two tier-1 HyperNodes, the one whose nodes score higher wins (binpack)",
        [node(f"n{i}", "8") for i in range(4)], TWO_RACKS, [filler("f-0", "n2", "2"), filler("f-1", "n3", "2"), *job_pods("j", 2, "2")], [topology_podgroup("j", 2, "hard", 1)],
        conf=BINPACK_CONF, binds={"j-0": "n2", "j-1": "n2"}, recorded={"j": "s1"},
    ),
    HyperNodeCase(
        "hard: a job placed in part grows only where the recorded HyperNode allows",
        FOUR_NODES, TWO_RACKS, [pod("j-0", "j", "3", node_name="n3", phase="Running"), pod("j-1", "j", "3")], [topology_podgroup("j", 2, "hard", 1, annotation="s1")],
        binds={"j-1": "n2"},
    ),
    HyperNodeCase(
        "hard: without a recorded HyperNode the same pod goes to the first rack by name",
        FOUR_NODES, TWO_RACKS, [pod("j-0", "j", "3", node_name="n3", phase="Running"), pod("j-1", "j", "3")], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-1": "n0"}, recorded={"j": "s0"},
    ),
    HyperNodeCase(
        "hard: no HyperNodes at all, no place for the job",
        FOUR_NODES, [], job_pods("j", 2), [topology_podgroup("j", 2, "hard", 1)],
        unschedulable={"j": "pod group is not ready"},
    ),
    HyperNodeCase(
        "hard: a HyperNode with two parents makes the tree not ready; jobs without a topology still run",
        FOUR_NODES, [*TWO_RACKS, hypernode("s3", 2, ["s0"], "HyperNode")], [*job_pods("j", 2), *job_pods("plain", 1, "1")],
        [topology_podgroup("j", 2, "hard", 2), {**podgroup("plain", 1, queue="other")}],
        binds={"plain-0": "n0"},
    ),
    HyperNodeCase(
        "hard: regexMatch members",
        [node("a-0"), node("a-1"), node("b-0"), node("b-1")],
        [selector_hypernode("rack-a", 1, {"regexMatch": {"pattern": "^a-"}}), selector_hypernode("rack-b", 1, {"regexMatch": {"pattern": "^b-"}})],
        [pod("f-0", "filler", "3", node_name="a-1", phase="Running"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-0": "b-0", "j-1": "b-1"}, recorded={"j": "rack-b"},
    ),
    HyperNodeCase(
        "hard: labelMatch members (matchLabels and matchExpressions)",
        [node("n0", labels={"rack": "a"}), node("n1", labels={"rack": "b"}), node("n2", labels={"rack": "a"}), node("n3", labels={"rack": "b"})],
        [selector_hypernode("rack-a", 1, {"labelMatch": {"matchLabels": {"rack": "a"}}}),
         selector_hypernode("rack-b", 1, {"labelMatch": {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["b"]}]}})],
        [pod("f-0", "filler", "3", node_name="n0", phase="Running"), *job_pods("j", 2)], [topology_podgroup("j", 2, "hard", 1)],
        binds={"j-0": "n1", "j-1": "n3"}, recorded={"j": "rack-b"},
    ),
]


@pytest.mark.parametrize("case", HYPERNODE_CASES, ids=[c.name for c in HYPERNODE_CASES])
def test_hypernode_cycle(case: HyperNodeCase) -> None:
    hypernode_harness.run_case(case)


def test_the_recorded_hypernode_is_not_written_again() -> None:
    case = copy.deepcopy(HYPERNODE_CASES[0])
    case.podgroups[0]["metadata"]["annotations"] = {ANNOTATION: "s1"}
    cache = HyperNodeCache(case)
    framework.run_cycle(cache, conf_load.parse(case.conf))
    assert cache.binds == {"j-0": "n2", "j-1": "n3"} and cache.annotations == {}


def test_hypernode_order_scores_rank_the_candidates() -> None:
    """A plugin's `hyperNodeOrder` scores are added to the node scores when allocate ranks the
    HyperNodes that hold a hard job (no upstream plugin registers one in v1.13; the point is there)."""
    from reference_scheduler.scheduler.actions import allocate

    case = HyperNodeCase("", FOUR_NODES, TWO_RACKS, job_pods("j", 2), [topology_podgroup("j", 2, "hard", 1)])
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


def test_a_highest_tier_name_confines_like_the_tier_it_names() -> None:
    """v1.14: `highestTierName` is translated through the HyperNodes' tierName; a name no
    HyperNode carries confines nothing. Upstream: adjustNetworkTopologySpec."""
    named = copy.deepcopy(TWO_RACKS)
    for obj in named:
        obj["spec"]["tierName"] = "rack" if obj["spec"]["tier"] == 1 else "spine"

    def by_name(name: str) -> dict[str, Any]:
        group = topology_podgroup("j", 2, "hard")
        group["spec"]["networkTopology"] = {"mode": "hard", "highestTierName": name}
        return group

    # Room for one 3-CPU pod in each rack: only the spine holds the job.
    pods = [filler("f-0", "n0", "2"), filler("f-2", "n2", "2"), *job_pods("j", 2)]
    hypernode_harness.run_case(HyperNodeCase("rack", FOUR_NODES, named, copy.deepcopy(pods), [by_name("rack")], unschedulable={"j": "pod group is not ready"}))
    hypernode_harness.run_case(HyperNodeCase("spine", FOUR_NODES, named, copy.deepcopy(pods), [by_name("spine")], binds={"j-0": "n1", "j-1": "n3"}, recorded={"j": "s2"}))
