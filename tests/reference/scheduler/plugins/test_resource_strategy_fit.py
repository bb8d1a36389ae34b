"""resource-strategy-fit on in-memory snapshots: where one cycle places pods by the configured or
annotated scoring strategy, sra and the proportional filter (scenarios/resource-strategy-fit
proves the same against an API server); its arguments and scores.

Upstream: pkg/scheduler/plugins/resource-strategy-fit/resource_strategy_fit.go."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reference_scheduler.scheduler.api import job_info, node_matrix
from reference_scheduler.scheduler.plugins import resource_strategy_fit
from tests.reference.builders import node, pod, podgroup, with_meta
from tests.reference.scheduler_harness import Case, plugin_conf, run_case


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
         plugin_conf("  - name: resource-strategy-fit"), binds={"p": "free-0"}),
    Case("most-allocated-packs", FILLED, [FILLER, pod("p", "pg")], [podgroup("other", 1, "Running"), podgroup("pg", 1)],
         plugin_conf(MOST_CPU), binds={"p": "busy-0"}),
    Case("wildcard-pattern-applies", FILLED, [FILLER, pod("p", "pg")], [podgroup("other", 1, "Running"), podgroup("pg", 1)],
         plugin_conf("""  - name: resource-strategy-fit
    arguments:
      resources: {"c*": {type: MostAllocated, weight: 1}}"""), binds={"p": "busy-0"}),
    # The pod's own annotations win over the conf's LeastAllocated.
    Case("pod-annotation-overrides", FILLED,
         [FILLER, with_meta(pod("p", "pg"), annotations={resource_strategy_fit.SCORING_TYPE_ANNOTATION: "MostAllocated", resource_strategy_fit.WEIGHT_ANNOTATION: json.dumps({"cpu": 1})})],
         [podgroup("other", 1, "Running"), podgroup("pg", 1)], plugin_conf("  - name: resource-strategy-fit"), binds={"p": "busy-0"}),
    # sra: a CPU-only pod keeps off the node holding GPUs (gpu-0 first by name otherwise).
    Case("sra-keeps-cpu-pods-off-gpu-nodes", [node("gpu-0", "8", **{"nvidia.com/gpu": "4"}), node("plain-0", "8")], [pod("p", "pg")], [podgroup("pg", 1)],
         plugin_conf("""  - name: resource-strategy-fit
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
    Case("proportional-refuses-cpu-pod", [node("gpu-0", "8", **{"nvidia.com/gpu": "2"})], [pod("p", "pg", "3")], [podgroup("pg", 1)], plugin_conf(PROPORTIONAL),
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", "proportional of resource nvidia.com/gpu check failed")}),
    Case("proportional-admits-small-cpu-pod", [node("gpu-0", "8", **{"nvidia.com/gpu": "2"})], [pod("p", "pg", "2")], [podgroup("pg", 1)], plugin_conf(PROPORTIONAL), binds={"p": "gpu-0"}),
    Case("proportional-spares-gpu-pods", [node("gpu-0", "8", **{"nvidia.com/gpu": "2"})], [gpu_pod("p", "pg", "1", "3")], [podgroup("pg", 1)], plugin_conf(PROPORTIONAL), binds={"p": "gpu-0"}),
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
