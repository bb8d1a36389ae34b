"""In-memory cases for the gpu-aware plugin (reference_scheduler/scheduler/plugins/gpu_aware.py):
table-driven cycles of scheduler_harness.py, on nodes advertised from device profiles exactly as
the kit advertises them on a cluster, plus the formula's parts one by one.

Each placement case has a twin without gpu-aware (or with other arguments) that places the same
pod elsewhere, so every case proves the plugin, not the other plugins' tie-breaking."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fake_devices import advertise, profile
from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.framework import framework
from reference_scheduler.scheduler.plugins import gpu_aware, gpu_aware_topology
from tests.reference import builders
from tests.reference import scheduler_harness as harness
from tests.reference.scheduler_harness import Case

# Seed 002's conf (section 7.2.2.1) without gpu-aware; GPU_AWARE adds it with the given arguments.
SEED_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang, enablePreemptable: false}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf, enablePreemptable: false}, {name: predicates}, {name: proportion}, {name: nodeorder}, {name: binpack}%s]
"""
# binpack weighted 2 against gpu-aware, for the plugin's `weight`.
BINPACK_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}, {name: binpack, arguments: {binpack.weight: 2}}%s]
"""


def with_gpu_aware(template: str, weight: float = 1, loss_weight: float = 0.5) -> str:
    return template % f", {{name: gpu-aware, arguments: {{weight: {weight}, loss.weight: {loss_weight}}}}}"


def profile_nodes(prof: str | dict[str, Any]) -> list[dict[str, Any]]:
    loaded = profile.builtin(prof) if isinstance(prof, str) else profile.from_document(prof)
    return [obj for obj in advertise.render(loaded) if obj["kind"] == "Node"]


def gpu_pod(name: str, group: str, gpus: int, cpu: str = "1", node_name: str = "", resource: str = "nvidia.com/gpu", phase: str = "Pending") -> dict[str, Any]:
    out = builders.pod(name, group, cpu, node_name, phase)
    out["spec"]["containers"][0]["resources"]["requests"].update({"memory": "1Gi", resource: str(gpus)})
    return out


def server(prefix: str, gpus: int, cpu: int = 64, memory_gi: int = 256, numa_nodes: int = 1, **extra: Any) -> dict[str, Any]:
    """A profile node group of one server; its CPUs and memory split evenly over its NUMA nodes."""
    numa = [{"cpus": cpu // numa_nodes, "memory": f"{memory_gi // numa_nodes}Gi"}] * numa_nodes
    return {"prefix": prefix, "numa": numa, "gpus": {"resource": "nvidia.com/gpu", "model": "A100", "memory": "80Gi", "count": gpus, **extra}}


FRAGMENTED = profile_nodes("fragmented")
# pcie-0: two PCIe GPUs (link score 1) on one NUMA node, exactly a 2-GPU request; sxm-0: eight
# NVLinked GPUs (2 within a NUMA node). Same CPUs and memory, so only gpu-aware tells them apart.
PCIE_SXM = profile_nodes({"name": "pcie-sxm", "nodes": [
    server("pcie", 2, links={"sameNuma": 1, "crossNuma": 1}),
    server("sxm", 8, numa_nodes=2, links={"sameNuma": 2, "crossNuma": 1}),
]})
# fit-0: 64 CPUs and exactly 2 free GPUs; roomy-0: 8 CPUs and 8 GPUs, which binpack prefers for a
# 6-CPU pod (it would fill three quarters of the node's CPUs).
FIT_ROOMY = profile_nodes({"name": "fit-roomy", "nodes": [
    server("fit", 8, unhealthy=[2, 3, 4, 5, 6, 7]),
    server("roomy", 8, cpu=8, memory_gi=32),
]})


def one(name: str, gpus: int, **kwargs: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [gpu_pod(f"{name}-0", name, gpus, **kwargs)], [builders.podgroup(name, 1)]


def single(name: str, gpus: int, **kwargs: Any) -> dict[str, Any]:
    """A job of one pod asking for `gpus` GPUs, as Case's pods and podgroups."""
    pods, groups = one(name, gpus, **kwargs)
    return {"pods": pods, "podgroups": groups}


CASES = [
    Case(
        "gpu-aware: a 2-GPU pod takes the node with exactly 2 free GPUs, not the empty 8-GPU one",
        nodes=FRAGMENTED, **single("two", 2), conf=with_gpu_aware(SEED_CONF), binds={"two-0": "frag-most-0"},
    ),
    Case(
        "without gpu-aware the same pod goes to the empty 8-GPU node (first by name among equals)",
        nodes=FRAGMENTED, **single("two", 2), conf=SEED_CONF % "", binds={"two-0": "frag-full-0"},
    ),
    Case(
        "gpu-aware: two 2-GPU pods of one job fill the 4-free node (the second sees the first)",
        nodes=FRAGMENTED,
        pods=[gpu_pod("pair-0", "pair", 2), gpu_pod("pair-1", "pair", 2)],
        podgroups=[builders.podgroup("pair", 2)],
        conf=with_gpu_aware(SEED_CONF),
        binds={"pair-0": "frag-most-0", "pair-1": "frag-half-0"},
    ),
    Case(
        "gpu-aware: GPUs held by a running pod are not free (frag-full-0 with 5 of 8 held fits 3 exactly)",
        nodes=FRAGMENTED,
        pods=[gpu_pod("big-0", "big", 5, node_name="frag-full-0", phase="Running"), gpu_pod("three-0", "three", 3)],
        podgroups=[builders.podgroup("big", 1, phase="Running"), builders.podgroup("three", 1)],
        conf=with_gpu_aware(SEED_CONF),
        binds={"three-0": "frag-full-0"},
    ),
    Case(
        "gpu-aware: with all 8 free, the same 3-GPU pod takes a 4-free node instead",
        nodes=FRAGMENTED,
        **single("three", 3),
        conf=with_gpu_aware(SEED_CONF),
        binds={"three-0": "frag-t4-0"},
    ),
    Case(
        "gpu-aware, loss.weight 0.5: the exact fit on PCIe GPUs beats 8 NVLinked ones",
        nodes=PCIE_SXM, **single("two", 2), conf=with_gpu_aware(SEED_CONF, loss_weight=0.5), binds={"two-0": "pcie-0"},
    ),
    Case(
        "gpu-aware, loss.weight 0: topology alone, the NVLinked GPUs win",
        nodes=PCIE_SXM, **single("two", 2), conf=with_gpu_aware(SEED_CONF, loss_weight=0), binds={"two-0": "sxm-0"},
    ),
    Case(
        "without gpu-aware the PCIe node wins by name",
        nodes=PCIE_SXM, **single("two", 2), conf=SEED_CONF % "", binds={"two-0": "pcie-0"},
    ),
    Case(
        "gpu-aware weight 1 loses to binpack weighted 2: the pod goes to the small roomy node",
        nodes=FIT_ROOMY, **single("two", 2, cpu="6"), conf=with_gpu_aware(BINPACK_CONF, weight=1), binds={"two-0": "roomy-0"},
    ),
    Case(
        "gpu-aware weight 3 beats binpack weighted 2: the pod takes the exact fit",
        nodes=FIT_ROOMY, **single("two", 2, cpu="6"), conf=with_gpu_aware(BINPACK_CONF, weight=3), binds={"two-0": "fit-0"},
    ),
    Case(
        "gpu-aware weight 0 is off: binpack decides",
        nodes=FIT_ROOMY, **single("two", 2, cpu="6"), conf=with_gpu_aware(BINPACK_CONF, weight=0), binds={"two-0": "roomy-0"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    harness.run_case(case)


def _scores(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], groups: list[dict[str, Any]], task_name: str, **arguments: Any) -> dict[str, float]:
    """gpu-aware's score of every node for one pending task, in a session over the given objects."""
    cache = harness.FakeCache(nodes, pods, groups, [builders.queue()])
    ssn = framework.open_session(cache, conf_load.parse("actions: allocate\ntiers:\n- plugins: [{name: gang}]\n"))
    task = next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == task_name)
    plugin = gpu_aware.GpuAware(arguments)
    values = gpu_aware.scores(task, gpu_aware.NodeTopologies(ssn), plugin.weight, plugin.loss_weight)
    return {name: round(float(v), 3) for name, v in zip(ssn.matrix.names, values, strict=True)}


def test_the_formula_on_the_fragmented_profile() -> None:
    """2 GPUs, loss.weight 0.5: T is 1 on every A100 (an NVLinked pair on one NUMA node) and
    (0.5 + 1) / 2 on a T4 (link 1 of the cluster's 2); L is 2 / free. No fit or no GPUs: 0."""
    pods, groups = one("two", 2)
    assert _scores(FRAGMENTED, pods, groups, "two-0") == {
        "frag-cpu-0": 0.0,
        "frag-full-0": 100 * (0.5 * 1 + 0.5 * 2 / 8),
        "frag-half-0": 100 * (0.5 * 1 + 0.5 * 2 / 4),
        "frag-most-0": 100.0,
        "frag-t4-0": 100 * (0.5 * 0.75 + 0.5 * 2 / 4),
        "frag-t4-1": 100 * (0.5 * 0.75 + 0.5 * 2 / 4),
    }


def test_nodes_that_cannot_fit_score_nothing_and_weight_scales() -> None:
    pods, groups = one("six", 6)
    scores = _scores(FRAGMENTED, pods, groups, "six-0", weight=2, **{"loss.weight": 1})
    assert scores == {"frag-cpu-0": 0.0, "frag-full-0": 2 * 100 * 6 / 8, "frag-half-0": 0.0, "frag-most-0": 0.0, "frag-t4-0": 0.0, "frag-t4-1": 0.0}


def test_a_task_without_a_gpu_request_is_not_scored() -> None:
    pods, groups = [builders.pod("cpu-0", "cpu", "2")], [builders.podgroup("cpu", 1)]
    assert set(_scores(FRAGMENTED, pods, groups, "cpu-0").values()) == {0.0}


def test_any_resource_named_in_a_topology_counts_and_only_on_its_own_nodes() -> None:
    nodes = profile_nodes({"name": "two-vendors", "nodes": [
        {"prefix": "mx", "cpu": 16, "memory": "64Gi", "gpus": {"resource": "metax-tech.com/gpu", "model": "MXC500", "memory": "64Gi", "count": 8}},
        {"prefix": "asc", "cpu": 16, "memory": "64Gi", "gpus": {"resource": "huawei.com/Ascend910", "model": "910B", "memory": "64Gi", "count": 4}},
    ]})
    pods, groups = one("mx", 4, resource="metax-tech.com/gpu")
    scores = _scores(nodes, pods, groups, "mx-0")
    assert scores["asc-0"] == 0.0 and scores["mx-0"] > 0
    pods, groups = one("npu", 4, resource="huawei.com/Ascend910")
    scores = _scores(nodes, pods, groups, "npu-0", **{"loss.weight": 1})
    assert scores == {"asc-0": 100.0, "mx-0": 0.0}


def test_a_node_whose_annotation_does_not_parse_is_not_scored(caplog: pytest.LogCaptureFixture) -> None:
    nodes = copy.deepcopy(FRAGMENTED)
    broken = next(n for n in nodes if n["metadata"]["name"] == "frag-most-0")
    broken["metadata"]["annotations"][gpu_aware_topology.ANNOTATION] = "{not json"
    pods, groups = one("two", 2)
    scores = _scores(nodes, pods, groups, "two-0")
    assert scores["frag-most-0"] == 0.0 and scores["frag-half-0"] > 0
    assert "frag-most-0" in caplog.text and gpu_aware_topology.ANNOTATION in caplog.text


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, (1.0, 0.5)),
        ({"weight": 2, "loss.weight": 0.25}, (2.0, 0.25)),
        ({"weight": "3", "loss.weight": "0"}, (3.0, 0.0)),
        ({"weight": -1, "loss.weight": "much"}, (1.0, 0.5)),
        ({"loss.weight": 7}, (1.0, 1.0)),
    ],
)
def test_arguments(arguments: dict[str, Any], expected: tuple[float, float]) -> None:
    plugin = gpu_aware.GpuAware(arguments)
    assert (plugin.weight, plugin.loss_weight) == expected


def test_weight_zero_registers_no_score() -> None:
    cache = harness.FakeCache(FRAGMENTED, *one("two", 2), [builders.queue()])
    ssn = framework.open_session(cache, conf_load.parse(with_gpu_aware(SEED_CONF, weight=0)))
    assert "gpu-aware" not in ssn.batch_node_order_fns and "binpack" in ssn.batch_node_order_fns


def _topology(name: str) -> gpu_aware_topology.GpuTopology:
    node = next(n for n in FRAGMENTED + profile_nodes("gpu-server-8x2numa") if n["metadata"]["name"] == name)
    found = gpu_aware_topology.parse(node)
    assert found is not None
    return found


def test_topology_quality_counts_links_numa_and_health() -> None:
    half = _topology("frag-half-0")  # healthy: GPUs 0 and 3 on NUMA 0, 4 and 7 on NUMA 1
    assert [g.id for g in half.healthy] == ["GPU-0", "GPU-3", "GPU-4", "GPU-7"]
    assert gpu_aware_topology.best_quality(half, 1, 2) == 1.0
    assert gpu_aware_topology.best_quality(half, 2, 2) == 1.0  # an NVLinked pair on one NUMA node
    # All four: pair links 2, 2 and four 1s (mean 4/3 of 2), over two NUMA nodes.
    assert gpu_aware_topology.best_quality(half, 4, 2) == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert gpu_aware_topology.best_quality(half, 5, 2) == 0.0  # more than it has healthy
    cube = _topology("gpu-server-0")  # the hybrid cube-mesh: some pairs have no NVLink at all
    assert gpu_aware_topology.best_quality(cube, 2, cube.max_link) == 1.0
    assert 0 < gpu_aware_topology.best_quality(cube, 8, cube.max_link) < gpu_aware_topology.best_quality(cube, 4, cube.max_link) <= 1


def test_large_nodes_use_the_deterministic_greedy_choice() -> None:
    numa = [{"cpus": 16, "memory": "64Gi"}] * 4
    nodes = profile_nodes({"name": "huge", "nodes": [{"prefix": "huge", "numa": numa, "gpus": {"resource": "nvidia.com/gpu", "model": "A100", "memory": "80Gi", "count": 32}}]})
    huge = gpu_aware_topology.parse(nodes[0])
    assert huge is not None and len(huge.healthy) == 32
    # C(32, 16) sets are too many to try: the greedy choice finds one NUMA node's 8 GPUs plus 8
    # more on a second, the same way every time.
    first = gpu_aware_topology.best_quality(huge, 16, huge.max_link)
    assert first == gpu_aware_topology.best_quality(huge, 16, huge.max_link) == pytest.approx((((28 + 28) * 2 + 64 * 1) / 120 / 2 + 1 / 2) / 2)
    assert gpu_aware_topology.best_quality(huge, 8, huge.max_link) == 1.0
