"""The HyperNode tree in memory (scheduler/api/hyper_node_info.py): tiers, parents and real nodes
resolved from the HyperNode objects, members that do not exist left out, a tree that is not
consistent not ready; and a job's network topology with the CRD's defaults."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.scheduler.api import hyper_node_info, job_info
from tests.reference.builders import hypernode, topology_podgroup
from tests.reference.scheduler.hypernode_harness import E2E_TREE, built


def test_the_e2e_tree_resolves_tiers_parents_nodes_and_common_ancestors() -> None:
    info = built(E2E_TREE, [f"n{i}" for i in range(8)])
    assert info.ready and info.tiers == [1, 2, 3]
    assert info.by_tier == {1: ["s0", "s1", "s2", "s3"], 2: ["s4", "s5"], 3: ["s6"]}
    assert info.nodes("s5") == {"n4", "n5", "n6", "n7"} and len(info.nodes("s6")) == 8
    assert info.hypernode_of_node("n3") == "s1" and info.hypernode_of_node("elsewhere") == ""
    assert info.ancestors("s2") == ["s2", "s5", "s6"]
    assert (info.lca("s0", "s1"), info.lca("s0", "s3"), info.lca("s2", "s2"), info.lca("s0", "gone")) == ("s4", "s6", "s2", "")


def test_members_that_do_not_exist_are_left_out() -> None:
    info = built([hypernode("r", 1, ["n0", "ghost"]), hypernode("top", 2, ["r", "missing"], "HyperNode")], ["n0"])
    assert info.ready and info.nodes("r") == {"n0"} and info.nodes("top") == {"n0"}


@pytest.mark.parametrize(("objects", "problem"), [
    ([hypernode("r", 1, ["n0"]), hypernode("p", 2, ["r"], "HyperNode"), hypernode("q", 2, ["r"], "HyperNode")], "HyperNode r already has a parent p, and cannot set another parent q"),
    ([hypernode("x", 2, ["y"], "HyperNode"), hypernode("y", 3, ["x"], "HyperNode")], "cyclic dependency"),
])
def test_an_inconsistent_tree_is_not_ready(objects: list[dict[str, Any]], problem: str) -> None:
    info = built(objects, ["n0"])
    assert not info.ready and any(problem in p for p in info.problems), info.problems


def test_the_network_topology_of_a_job_takes_the_crd_defaults() -> None:
    job = job_info.JobInfo("ns/j", "j", "ns", "default", 1, {}, topology_podgroup("j", 1, "soft"))
    assert hyper_node_info.network_topology(job) == hyper_node_info.NetworkTopology("soft", 1)
    job.podgroup["spec"]["networkTopology"] = {}
    assert hyper_node_info.network_topology(job) == hyper_node_info.NetworkTopology("hard", 1)
    del job.podgroup["spec"]["networkTopology"]
    assert hyper_node_info.network_topology(job) is None
