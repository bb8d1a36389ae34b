"""deviceshare's GPU sharing, GPU number and vGPU on in-memory snapshots: which card a pod gets, what is
written on it, and which nodes refuse it (scenarios/deviceshare proves the same against an API
server)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import gpushare, job_info, vgpu
from reference_scheduler.scheduler.framework import framework
from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import (
    PRIORITY_CLASSES,
    Case,
    FakeCache,
    plugin_conf,
    run_case,
)


def conf_with(flag: str) -> str:
    return plugin_conf(f"  - name: deviceshare\n    arguments: {{deviceshare.{flag}: true}}")


SHARING = conf_with("GPUSharingEnable")
NUMBER = conf_with("GPUNumberEnable")


def gpu_node(name: str, memory: int, cards: int, unhealthy: str = "") -> dict[str, Any]:
    out = node(name, "16", **{gpushare.GPU_MEMORY: str(memory), gpushare.GPU_NUMBER: str(cards)})
    out["status"]["capacity"] = dict(out["status"]["allocatable"])
    if unhealthy:
        out["metadata"]["annotations"] = {gpushare.UNHEALTHY_IDS: unhealthy}
    return out


def gpu_pod(name: str, group: str, resource: str, amount: int, node_name: str = "", index: str = "") -> dict[str, Any]:
    out = pod(name, group, node_name=node_name, phase="Running" if node_name else "Pending")
    out["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1", resource: str(amount)}, "limits": {resource: str(amount)}}
    if index:
        out["metadata"]["annotations"][gpushare.GPU_INDEX] = index
    return out


CASES = [
    # 2 cards of 8000: 10000 fits the node's total but no card.
    Case("no-card-big-enough", [gpu_node("g", 16000, 2)], [gpu_pod("p", "pg", gpushare.GPU_MEMORY, 10000)], [podgroup("pg", 1)], SHARING,
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", "GpuShare no enough gpu memory on node g")}),
    Case("fits-a-card", [gpu_node("g", 16000, 2)], [gpu_pod("p", "pg", gpushare.GPU_MEMORY, 6000)], [podgroup("pg", 1)], SHARING, binds={"p": "g"}),
    # Both of a's cards hold 6000 of running pods (2000 left each): a 3000 pod goes to b.
    Case("running-pod-counts-on-its-card", [gpu_node("a", 16000, 2), gpu_node("b", 8000, 1)],
         [gpu_pod("r0", "run", gpushare.GPU_MEMORY, 6000, "a", "0"), gpu_pod("r1", "run", gpushare.GPU_MEMORY, 6000, "a", "1"), gpu_pod("p", "pg", gpushare.GPU_MEMORY, 3000)],
         [podgroup("run", 1, "Running"), podgroup("pg", 1)], SHARING, binds={"p": "b"}),
    Case("node-without-cards-refuses", [node("plain", "16", **{gpushare.GPU_MEMORY: "16000"})], [gpu_pod("p", "pg", gpushare.GPU_MEMORY, 1000)], [podgroup("pg", 1)], SHARING,
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", "node not initialized with deviceGpuShare")}),
    # Number mode: card 0 unhealthy leaves one card for a pod asking for two.
    Case("unhealthy-card-left-out", [gpu_node("g", 16000, 2, unhealthy="0")], [gpu_pod("p", "pg", gpushare.GPU_NUMBER, 2)], [podgroup("pg", 1)], NUMBER,
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", "GpuNumber no enough gpu number on node g")}),
    Case("whole-cards-by-number", [gpu_node("g", 16000, 2)], [gpu_pod("p", "pg", gpushare.GPU_NUMBER, 2)], [podgroup("pg", 1)], NUMBER, binds={"p": "g"}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_deviceshare(case: Case) -> None:
    run_case(case)


class RecordingCache(FakeCache):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.annotations: dict[str, dict[str, str]] = {}

    def bind(self, task: job_info.TaskInfo, node: str) -> None:
        super().bind(task, node)
        self.annotations[task.name] = dict(task.bind_annotations)


def test_cards_are_chosen_in_order_and_written_on_the_pod() -> None:
    pods = [gpu_pod(f"p{i}", "pg", gpushare.GPU_MEMORY, 3000) for i in range(3)]
    cache = RecordingCache([gpu_node("g", 16000, 2)], pods, [podgroup("pg", 3)], [queue()], PRIORITY_CLASSES)
    framework.run_cycle(cache, conf_load.parse(SHARING))
    # 8000 per card: two 3000 pods share card 0, the third needs card 1.
    assert {name: a[gpushare.GPU_INDEX] for name, a in cache.annotations.items()} == {"p0": "0", "p1": "0", "p2": "1"}
    assert all(a[gpushare.PREDICATE_TIME].isdigit() for a in cache.annotations.values())


def test_number_mode_takes_idle_cards_only() -> None:
    pods = [gpu_pod("held", "run", gpushare.GPU_NUMBER, 1, "g", "1"), gpu_pod("p", "pg", gpushare.GPU_NUMBER, 2), gpu_pod("q", "pg2", gpushare.GPU_NUMBER, 2)]
    cache = RecordingCache([gpu_node("g", 32000, 4)], pods, [podgroup("run", 1, "Running"), podgroup("pg", 1), podgroup("pg2", 1)], [queue()], PRIORITY_CLASSES)
    framework.run_cycle(cache, conf_load.parse(NUMBER))
    assert cache.annotations == {"p": {gpushare.GPU_INDEX: "0,2", gpushare.PREDICATE_TIME: cache.annotations["p"][gpushare.PREDICATE_TIME]}}


def test_both_modes_at_once_switch_sharing_off() -> None:
    both = SHARING.replace("{deviceshare.GPUSharingEnable: true}", "{deviceshare.GPUSharingEnable: true, deviceshare.GPUNumberEnable: true}")
    run_case(Case("both-off", [gpu_node("g", 16000, 2)], [gpu_pod("p", "pg", gpushare.GPU_MEMORY, 10000)], [podgroup("pg", 1)], both, binds={"p": "g"}))


VGPU = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins:
  - {name: predicates}
  - name: deviceshare
    arguments: {deviceshare.VGPUEnable: true, deviceshare.SchedulePolicy: POLICY, deviceshare.ScheduleWeight: 10}
"""
REPORTED = "Reported 2026-01-01 00:00:00 +0000 UTC"


def vgpu_node(name: str, cards: int = 2, split: int = 4, memory: int = 16384, handshake: str = REPORTED) -> dict[str, Any]:
    # Cores too, so pods may ask for them (the node-level fit counts every extended resource).
    out = node(name, "16", **{vgpu.VGPU_NUMBER: str(cards * split), vgpu.VGPU_MEMORY: str(cards * memory), vgpu.VGPU_CORES: str(cards * 100)})
    out["metadata"]["annotations"] = {
        vgpu.REGISTER: "".join(f"GPU-{i},{split},{memory},NVIDIA-Tesla-T4,true,hami-core:" for i in range(cards)),
        vgpu.HANDSHAKE: handshake,
    }
    return out


def vgpu_pod(name: str, group: str, number: int = 1, memory: int = 0, cores: int = 0, node_name: str = "", ids: str = "", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    out = pod(name, group, node_name=node_name, phase="Running" if node_name else "Pending")
    limits = {vgpu.VGPU_NUMBER: str(number)}
    if memory:
        limits[vgpu.VGPU_MEMORY] = str(memory)
    if cores:
        limits[vgpu.VGPU_CORES] = str(cores)
    out["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1", **limits}, "limits": limits}
    if ids:
        out["metadata"]["annotations"][vgpu.ASSIGNED_IDS] = ids
    out["metadata"]["annotations"].update(annotations or {})
    return out


class VgpuCache(RecordingCache):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.node_annotations: dict[str, dict[str, str]] = {}

    def annotate_node(self, name: str, annotations: dict[str, str]) -> None:
        self.node_annotations[name] = annotations


def vgpu_cycle(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], groups: list[dict[str, Any]], policy: str = "binpack") -> VgpuCache:
    cache = VgpuCache(nodes, pods, groups, [queue()], PRIORITY_CLASSES)
    framework.run_cycle(cache, conf_load.parse(VGPU.replace("POLICY", policy)))
    return cache


def test_vgpu_cards_from_the_highest_index_and_written_on_the_pod() -> None:
    cache = vgpu_cycle([vgpu_node("v")], [vgpu_pod("p", "pg", memory=3000, cores=30)], [podgroup("pg", 1)])
    written = cache.annotations["p"]
    assert written[vgpu.ASSIGNED_IDS] == written[vgpu.TO_ALLOCATE] == "GPU-1,NVIDIA,3000,30:"
    assert written[vgpu.ASSIGNED_NODE] == "v" and written[vgpu.BIND_PHASE] == "allocating"
    # The node's report is answered with a request.
    assert cache.node_annotations["v"][vgpu.HANDSHAKE].startswith("Requesting_")


def test_vgpu_number_only_takes_whole_cards() -> None:
    pods = [vgpu_pod("a", "pa"), vgpu_pod("b", "pb"), vgpu_pod("c", "pc")]
    cache = vgpu_cycle([vgpu_node("v")], pods, [podgroup("pa", 1), podgroup("pb", 1), podgroup("pc", 1)])
    # No memory asked: each pod takes a card's whole memory, so only two of three fit.
    assert sorted(a[vgpu.ASSIGNED_IDS] for a in cache.annotations.values()) == ["GPU-0,NVIDIA,16384,0:", "GPU-1,NVIDIA,16384,0:"]


def test_vgpu_bound_pods_count_and_cores_cap_a_card() -> None:
    held = vgpu_pod("held", "run", memory=1000, cores=80, node_name="v", ids="GPU-1,NVIDIA,1000,80:")
    cache = vgpu_cycle([vgpu_node("v")], [held, vgpu_pod("p", "pg", memory=1000, cores=30)], [podgroup("run", 1, "Running"), podgroup("pg", 1)])
    assert cache.annotations["p"][vgpu.ASSIGNED_IDS] == "GPU-0,NVIDIA,1000,30:"


def test_vgpu_refusals() -> None:
    cases = [
        ("too-many-cards", vgpu_pod("p", "pg", number=3, memory=100)),
        ("mode-mismatch", vgpu_pod("p", "pg", memory=100, annotations={vgpu.MODE_ANNOTATION: "mig"})),
        ("type-excluded", vgpu_pod("p", "pg", memory=100, annotations={vgpu.NOUSE_TYPE: "T4"})),
    ]
    for name, p in cases:
        run_case(Case(name, [vgpu_node("v")], [p], [podgroup("pg", 1)], VGPU.replace("POLICY", "binpack"),
                      binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", "hami-vgpuDeviceSharing error")}))


def test_vgpu_handshake() -> None:
    now = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc)
    registered = {vgpu.REGISTER: "GPU-0,4,100,NVIDIA,true,hami-core:"}
    assert vgpu.handshake({**registered, vgpu.HANDSHAKE: REPORTED}, now)[0]
    assert vgpu.handshake({**registered, vgpu.HANDSHAKE: "Requesting_2026.01.01 11:59:30"}, now) == (True, None)
    usable, answer = vgpu.handshake({**registered, vgpu.HANDSHAKE: "Requesting_2026.01.01 11:58:00"}, now)
    assert not usable and answer is not None and answer.startswith("Deleted_")
    assert vgpu.handshake({**registered, vgpu.HANDSHAKE: "Deleted_2026.01.01 11:58:00"}, now) == (False, None)
    assert vgpu.handshake({vgpu.HANDSHAKE: REPORTED}, now) == (False, None)


def test_vgpu_stale_node_takes_nothing() -> None:
    run_case(Case("stale", [vgpu_node("v", handshake="Requesting_2000.01.01 00:00:00")], [vgpu_pod("p", "pg", memory=100)], [podgroup("pg", 1)], VGPU.replace("POLICY", "binpack"),
                  binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", "node not initialized with devicehamivgpu")}))


@pytest.mark.parametrize(("policy", "expected"), [("binpack", "b-used"), ("spread", "a-empty")])
def test_vgpu_schedule_policy_scores_nodes(policy: str, expected: str) -> None:
    held = vgpu_pod("held", "run", memory=8000, node_name="b-used", ids="GPU-0,NVIDIA,8000,0:")
    cache = vgpu_cycle([vgpu_node("a-empty"), vgpu_node("b-used", cards=1)], [held, vgpu_pod("p", "pg", memory=4000)], [podgroup("run", 1, "Running"), podgroup("pg", 1)], policy)
    assert cache.binds == {"p": expected}
