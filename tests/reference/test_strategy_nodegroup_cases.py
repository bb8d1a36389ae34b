"""resource-strategy-fit and nodegroup on in-memory snapshots: where one cycle places pods (the
scenarios of scenarios/resource-strategy-fit and scenarios/nodegroup prove the same against an
API server)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from reference_scheduler.scheduler.api import job_info, node_matrix
from reference_scheduler.scheduler.plugins import nodegroup, resource_strategy_fit
from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import Case, run_case


def conf(plugin: str) -> str:
    return f"""
actions: "enqueue, allocate"
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - {{name: predicates}}
{plugin}
"""


def annotated(p: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"]["annotations"].update(annotations)
    return out


def gpu_pod(name: str, group: str, gpus: str, cpu: str = "1") -> dict[str, Any]:
    out = pod(name, group, cpu)
    out["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = gpus
    return out


# The filler pod holds 2 of busy-0's 8 CPUs; the new pod asks for 1.
FILLED = [node("busy-0", "8"), node("free-0", "8")]
FILLER = pod("filler", "other", "2", node_name="busy-0", phase="Running")
MOST_CPU = """  - name: resource-strategy-fit
    arguments:
      resources: {cpu: {type: MostAllocated, weight: 1}}"""

STRATEGY_CASES = [
    Case("default-least-allocated-spreads", FILLED, [FILLER, pod("p", "pg")], [podgroup("other", 1, "Running"), podgroup("pg", 1)],
         conf("  - name: resource-strategy-fit"), binds={"p": "free-0"}),
    Case("most-allocated-packs", FILLED, [FILLER, pod("p", "pg")], [podgroup("other", 1, "Running"), podgroup("pg", 1)],
         conf(MOST_CPU), binds={"p": "busy-0"}),
    Case("wildcard-pattern-applies", FILLED, [FILLER, pod("p", "pg")], [podgroup("other", 1, "Running"), podgroup("pg", 1)],
         conf("""  - name: resource-strategy-fit
    arguments:
      resources: {"c*": {type: MostAllocated, weight: 1}}"""), binds={"p": "busy-0"}),
    # The pod's own annotations win over the conf's LeastAllocated.
    Case("pod-annotation-overrides", FILLED,
         [FILLER, annotated(pod("p", "pg"), {resource_strategy_fit.SCORING_TYPE_ANNOTATION: "MostAllocated", resource_strategy_fit.WEIGHT_ANNOTATION: json.dumps({"cpu": 1})})],
         [podgroup("other", 1, "Running"), podgroup("pg", 1)], conf("  - name: resource-strategy-fit"), binds={"p": "busy-0"}),
    # sra: a CPU-only pod keeps off the node holding GPUs (gpu-0 first by name otherwise).
    Case("sra-keeps-cpu-pods-off-gpu-nodes", [node("gpu-0", "8", **{"nvidia.com/gpu": "4"}), node("plain-0", "8")], [pod("p", "pg")], [podgroup("pg", 1)],
         conf("""  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 0
      sra: {enable: true, resources: nvidia.com/gpu, weight: 10}"""), binds={"p": "plain-0"}),
]

PROPORTIONAL = """  - name: resource-strategy-fit
    arguments:
      proportional:
        enable: true
        resources: nvidia.com/gpu
        resourceProportion: {nvidia.com/gpu.cpu: 3, nvidia.com/gpu.memory: 1}"""
PROPORTIONAL_CASES = [
    # 2 idle GPUs keep 6 of gpu-0's 8 CPUs: a 3-CPU pod without GPUs no longer fits there.
    Case("proportional-refuses-cpu-pod", [node("gpu-0", "8", **{"nvidia.com/gpu": "2"})], [pod("p", "pg", "3")], [podgroup("pg", 1)], conf(PROPORTIONAL),
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", "proportional of resource nvidia.com/gpu check failed")}),
    Case("proportional-admits-small-cpu-pod", [node("gpu-0", "8", **{"nvidia.com/gpu": "2"})], [pod("p", "pg", "2")], [podgroup("pg", 1)], conf(PROPORTIONAL), binds={"p": "gpu-0"}),
    Case("proportional-spares-gpu-pods", [node("gpu-0", "8", **{"nvidia.com/gpu": "2"})], [gpu_pod("p", "pg", "1", "3")], [podgroup("pg", 1)], conf(PROPORTIONAL), binds={"p": "gpu-0"}),
]


@pytest.mark.parametrize("case", STRATEGY_CASES + PROPORTIONAL_CASES, ids=lambda c: c.name)
def test_resource_strategy_fit(case: Case) -> None:
    run_case(case)


def test_strategy_arguments() -> None:
    weight, found = resource_strategy_fit.strategies({"resourceStrategyFitWeight": -3, "resources": {"*": {"type": "MostAllocated"}, "a*b*": {}, "x/*": {"type": "Odd", "weight": 0}}})
    assert weight == resource_strategy_fit.DEFAULT_WEIGHT
    assert found == {"x/*": resource_strategy_fit.Strategy("LeastAllocated", 1)}
    configured = {"nvidia.*": resource_strategy_fit.Strategy("LeastAllocated", 1), "nvidia.com/*": resource_strategy_fit.Strategy("MostAllocated", 2)}
    assert resource_strategy_fit.lookup("nvidia.com/gpu", configured) == configured["nvidia.com/*"]
    assert resource_strategy_fit.lookup("cpu", configured) is None


def test_a_node_that_would_overflow_scores_zero() -> None:
    matrix = node_matrix.NodeMatrix(["a"], ["cpu"])
    matrix.allocatable[0, 0] = 1000.0
    matrix.used[0, 0] = 800.0
    task = job_info.TaskInfo.from_pod(pod("p", "pg", "500m"), "ns/pg")
    assert resource_strategy_fit.strategy_scores(task, matrix, 10, {"cpu": resource_strategy_fit.Strategy("MostAllocated", 1)})[0] == 0.0


GROUPS = [
    node("a-0", labels={nodegroup.GROUP_LABEL: "alpha"}),
    node("b-0", labels={nodegroup.GROUP_LABEL: "beta"}),
    node("c-0"),
]


def affinity_queue(name: str, required: list[str] | None = None, preferred: list[str] | None = None, anti_required: list[str] | None = None, anti_preferred: list[str] | None = None, parent: str = "") -> dict[str, Any]:
    q = queue(name)
    q["spec"]["affinity"] = {
        "nodeGroupAffinity": {nodegroup.REQUIRED: required or [], nodegroup.PREFERRED: preferred or []},
        "nodeGroupAntiAffinity": {nodegroup.REQUIRED: anti_required or [], nodegroup.PREFERRED: anti_preferred or []},
    }
    if parent:
        q["spec"]["parent"] = parent
    return q


def plain_queue(name: str, parent: str = "") -> dict[str, Any]:
    q = queue(name)
    if parent:
        q["spec"]["parent"] = parent
    return q


NODEGROUP = "  - name: nodegroup"
NODEGROUP_CASES = [
    Case("required-group-only", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], conf(NODEGROUP), [affinity_queue("q", required=["beta"])], binds={"p": "b-0"}),
    Case("anti-affinity-wins", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], conf(NODEGROUP),
         [affinity_queue("q", required=["alpha", "beta"], anti_required=["alpha"])], binds={"p": "b-0"}),
    Case("preferred-scores-higher", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], conf(NODEGROUP),
         [affinity_queue("q", required=["alpha", "beta"], preferred=["beta"])], binds={"p": "b-0"}),
    Case("strict-queue-without-affinity-waits", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")], conf(NODEGROUP), [plain_queue("q")],
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", nodegroup.AFFINITY_NOT_FOUND)}),
    Case("non-strict-queue-without-affinity-takes-unlabelled", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="q")],
         conf(NODEGROUP + "\n    arguments: {strict: false}"), [plain_queue("q")], binds={"p": "c-0"}),
    Case("hierarchy-inherits-nearest-ancestor", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="leaf")], conf(NODEGROUP + "\n    enableHierarchy: true"),
         [affinity_queue("root", required=["alpha"]), affinity_queue("mid", required=["beta"]), plain_queue("leaf", parent="mid")], binds={"p": "b-0"}),
    Case("no-hierarchy-no-inheritance", GROUPS, [pod("p", "pg")], [podgroup("pg", 1, queue="leaf")], conf(NODEGROUP),
         [affinity_queue("root", required=["alpha"]), affinity_queue("mid", required=["beta"]), plain_queue("leaf", parent="mid")], binds={}),
]


@pytest.mark.parametrize("case", NODEGROUP_CASES, ids=lambda c: c.name)
def test_nodegroup(case: Case) -> None:
    run_case(case)


def test_group_affinity_rules() -> None:
    rules = nodegroup.GroupAffinity(frozenset({"a"}), frozenset({"a", "b"}), frozenset({"b", "c"}), frozenset({"c"}))
    assert rules.allows("a") and not rules.allows("b") and rules.allows("c") and not rules.allows("d")
    assert rules.score("a") == 150.0 and rules.score("b") == 50.0 and rules.score("c") == -1.0
