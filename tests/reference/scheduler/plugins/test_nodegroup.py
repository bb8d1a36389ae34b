"""nodegroup on in-memory snapshots: where one cycle places pods by their queue's node group
affinity and anti-affinity, strict or not, inherited through the queue tree with enableHierarchy
(scenarios/nodegroup proves the same against an API server); and the rules on their own.

Upstream: pkg/scheduler/plugins/nodegroup/nodegroup.go."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.scheduler.plugins import nodegroup
from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import Case, plugin_conf, run_case

GROUPS = [
    node("a-0", labels={nodegroup.GROUP_LABEL: "alpha"}),
    node("b-0", labels={nodegroup.GROUP_LABEL: "beta"}),
    node("c-0"),
]


def affinity_queue(name: str, required: list[str] | None = None, preferred: list[str] | None = None, anti_required: list[str] | None = None, anti_preferred: list[str] | None = None, parent: str = "") -> dict[str, Any]:
    q = queue(name, parent=parent)
    q["spec"]["affinity"] = {
        "nodeGroupAffinity": {nodegroup.REQUIRED: required or [], nodegroup.PREFERRED: preferred or []},
        "nodeGroupAntiAffinity": {nodegroup.REQUIRED: anti_required or [], nodegroup.PREFERRED: anti_preferred or []},
    }
    return q


NODEGROUP = "  - name: nodegroup"
NODEGROUP_CASES = [
    Case("required-group-only", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], plugin_conf(NODEGROUP), [affinity_queue("q", required=["beta"])], binds={"p": "b-0"}),
    Case("anti-affinity-wins", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], plugin_conf(NODEGROUP),
         [affinity_queue("q", required=["alpha", "beta"], anti_required=["alpha"])], binds={"p": "b-0"}),
    Case("preferred-scores-higher", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], plugin_conf(NODEGROUP),
         [affinity_queue("q", required=["alpha", "beta"], preferred=["beta"])], binds={"p": "b-0"}),
    Case("strict-queue-without-affinity-waits", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], plugin_conf(NODEGROUP), [queue("q")],
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", nodegroup.AFFINITY_NOT_FOUND)}),
    Case("non-strict-queue-without-affinity-takes-unlabelled", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")],
         plugin_conf(NODEGROUP + "\n    arguments: {strict: false}"), [queue("q")], binds={"p": "c-0"}),
    Case("hierarchy-inherits-nearest-ancestor", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="leaf")], plugin_conf(NODEGROUP + "\n    enableHierarchy: true"),
         [affinity_queue("root", required=["alpha"]), affinity_queue("mid", required=["beta"]), queue("leaf", parent="mid")], binds={"p": "b-0"}),
    Case("no-hierarchy-no-inheritance", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="leaf")], plugin_conf(NODEGROUP),
         [affinity_queue("root", required=["alpha"]), affinity_queue("mid", required=["beta"]), queue("leaf", parent="mid")], binds={}),
]


@pytest.mark.parametrize("case", NODEGROUP_CASES, ids=lambda c: c.name)
def test_nodegroup(case: Case) -> None:
    run_case(case)


def test_group_affinity_rules() -> None:
    rules = nodegroup.GroupAffinity(frozenset({"a"}), frozenset({"a", "b"}), frozenset({"b", "c"}), frozenset({"c"}))
    assert rules.allows("a") and not rules.allows("b") and rules.allows("c") and not rules.allows("d")
    assert rules.score("a") == 150.0 and rules.score("b") == 50.0 and rules.score("c") == -1.0
