"""deviceshare: GPUs shared across the pods of a node, by memory or whole cards (the `GpuShare`
device, api/gpushare.py) or as vGPUs served by Volcano's vGPU device plugin (the `hamivgpu` device,
api/vgpu.py).

Arguments: `deviceshare.GPUSharingEnable` (pods asking for `volcano.sh/gpu-memory` share cards),
`deviceshare.GPUNumberEnable` (pods asking for `volcano.sh/gpu-number` get idle cards),
`deviceshare.VGPUEnable` (pods asking for `volcano.sh/vgpu-*` get vGPUs), all off by default; the
first two not together, and neither with the third (upstream stops the scheduler; here the plugin
logs it and switches them all off). `deviceshare.SchedulePolicy` (`binpack` or `spread`) and
`deviceshare.ScheduleWeight` score nodes by the vGPU cards a pod would get (the GpuShare device
scores every node 0).

- Predicate: a pod asking for what an enabled device shares is refused by a node without that
  device (`node not initialized with deviceGpuShare`, `... with devicehamivgpu`) and by one
  without room (`GpuShare no enough gpu memory on node N`, `GpuNumber no enough gpu number on node
  N`, `hami-vgpuDeviceSharing error`); eviction could mend either, as upstream's Unschedulable says.
- Node order, with ScheduleWeight > 0: the vGPU score of the cards the pod would get on the node
  (binpack: their memory use with it in percent; spread: 100 per card it would have to itself),
  rounded, times the weight.
- When the pod is placed its cards are chosen and counted for the rest of the cycle, and the pod
  is annotated with them before it is bound.

NodeLockEnable has nothing to lock against on its own and is not read. Upstream:
pkg/scheduler/plugins/deviceshare/deviceshare.go; the card choice and the pod annotations happen
in the predicates plugin's allocate handler upstream (predicates.go), here in this plugin, which
owns the switches they depend on; the vGPU handshake on the node is the cache's (cache.py), as
upstream's node handling does it whatever the conf.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import gpushare, job_info, vgpu
from reference_scheduler.scheduler.framework import extension_points
from reference_scheduler.scheduler.framework.session import EventHandler, Session

log = logging.getLogger(__name__)
NAME = "deviceshare"
SHARING_ENABLE = "deviceshare.GPUSharingEnable"
NUMBER_ENABLE = "deviceshare.GPUNumberEnable"
VGPU_ENABLE = "deviceshare.VGPUEnable"
SCHEDULE_POLICY = "deviceshare.SchedulePolicy"
SCHEDULE_WEIGHT = "deviceshare.ScheduleWeight"
NOT_INITIALIZED = "node not initialized with device{}"
VGPU_REFUSED = "hami-vgpuDeviceSharing error"


def _flag(arguments: Mapping[str, Any], key: str) -> bool:
    value = arguments.get(key, False)
    if not isinstance(value, bool):
        log.warning("deviceshare: %s=%r is not a boolean; off", key, value)
        return False
    return value


class DeviceShare:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.sharing = _flag(arguments, SHARING_ENABLE)
        self.number = _flag(arguments, NUMBER_ENABLE)
        self.vgpu = _flag(arguments, VGPU_ENABLE)
        if (self.sharing and self.number) or ((self.sharing or self.number) and self.vgpu):
            log.error("deviceshare: %s, %s and %s exclude one another; all off", SHARING_ENABLE, NUMBER_ENABLE, VGPU_ENABLE)
            self.sharing = self.number = self.vgpu = False
        policy, weight = arguments.get(SCHEDULE_POLICY, ""), arguments.get(SCHEDULE_WEIGHT, 0)
        self.policy = policy if isinstance(policy, str) else ""
        self.weight = weight if isinstance(weight, int) and not isinstance(weight, bool) else 0
        self.names: list[str] = []
        self.shared: dict[str, gpushare.GpuShareDevices | None] = {}
        self.vgpus: dict[str, vgpu.VgpuDevices | None] = {}
        # The vGPU score of each node for the task judged last (upstream caches it on the device).
        self.vgpu_scores: dict[str, float] = {}
        # What each task placed this cycle took: uid -> (node, cards per container).
        self.vgpu_taken: dict[str, tuple[str, list[list[vgpu.Use]]]] = {}

    def wants(self, task: job_info.TaskInfo) -> tuple[int, int]:
        """(GPU memory, cards) the task asks for in the enabled GpuShare mode. Upstream: HasDeviceRequest."""
        memory = gpushare.pod_want(task.pod, gpushare.GPU_MEMORY) if self.sharing else 0
        cards = gpushare.pod_want(task.pod, gpushare.GPU_NUMBER) if self.number else 0
        return memory, cards

    def wants_vgpu(self, task: job_info.TaskInfo) -> bool:
        return self.vgpu and vgpu.asks(task.pod)

    def on_session_open(self, ssn: Session) -> None:
        if not (self.sharing or self.number or self.vgpu):
            return
        nodes = ssn.node_list()
        self.names = [node.name for node in nodes]
        now = datetime.datetime.now(datetime.timezone.utc)
        for node in nodes:
            if self.vgpu:
                annotations = node.node["metadata"].get("annotations") or {}
                usable, _ = vgpu.handshake(annotations, now)
                found = vgpu.VgpuDevices.decode(node.name, annotations.get(vgpu.REGISTER, "")) if usable else None
                self.vgpus[node.name] = found
                if found is not None:
                    for task in node.tasks.values():
                        found.count(vgpu.decode((task.pod["metadata"].get("annotations") or {}).get(vgpu.ASSIGNED_IDS, "")))
                continue
            shared = gpushare.GpuShareDevices.of_node(node.node)
            self.shared[node.name] = shared
            if shared is not None:
                for uid, task in node.tasks.items():
                    if any(self.wants(task)):
                        shared.add_pod(uid, task.pod, gpushare.gpu_index(task.pod))
        ssn.add_batch_predicate_fn(NAME, self.predicate)
        if self.weight > 0:
            ssn.add_batch_node_order_fn(NAME, self.scores)
        ssn.event_handlers.append(EventHandler(allocate=self.allocated, deallocate=self.deallocated))

    def predicate(self, task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
        """Upstream: the plugin's predicateFn and each device's FilterNode."""
        reasons = np.full(len(self.names), None, dtype=object)
        missing = np.zeros(len(self.names), dtype=bool)
        memory, cards = self.wants(task)
        if memory or cards:
            for i, name in enumerate(self.names):
                devices = self.shared.get(name)
                if devices is None:
                    reasons[i], missing[i] = NOT_INITIALIZED.format(gpushare.DEVICE_NAME), True
                elif memory and not devices.cards_for_memory(memory):
                    reasons[i] = f"GpuShare no enough gpu memory on node {name}"
                elif cards and not devices.cards_for_number(cards):
                    reasons[i] = f"GpuNumber no enough gpu number on node {name}"
        elif self.wants_vgpu(task):
            self.vgpu_scores = {}
            for i, name in enumerate(self.names):
                found = self.vgpus.get(name)
                if found is None:
                    reasons[i], missing[i] = NOT_INITIALIZED.format(vgpu.DEVICE_NAME), True
                    continue
                verdict = vgpu.choose(task.pod, found, self.policy, commit=False)
                if verdict.fits:
                    self.vgpu_scores[name] = verdict.score
                else:
                    log.debug("deviceshare: %s/%s does not fit the vGPUs of %s: %s", task.namespace, task.name, name, verdict.reason)
                    reasons[i] = VGPU_REFUSED
        else:
            return []
        short = np.fromiter((r is not None for r in reasons), dtype=bool, count=len(reasons)) & ~missing
        return [(missing, reasons, True), (short, reasons, True)]

    def scores(self, task: job_info.TaskInfo) -> np.ndarray:
        """Upstream: the plugin's nodeOrderFn (getDeviceScore)."""
        if not self.wants_vgpu(task):
            return np.zeros(len(self.names))
        return np.array([vgpu.node_score(self.vgpu_scores.get(name, 0.0), self.weight) for name in self.names])

    def allocated(self, task: job_info.TaskInfo) -> None:
        """Choose the placed task's cards, count it on them and note them for the bind; a task
        already bound keeps the cards its annotations name. Upstream: each device's Allocate."""
        placing = task.status in (job_info.TaskStatus.ALLOCATED, job_info.TaskStatus.PIPELINED)
        if self.wants_vgpu(task):
            found = self.vgpus.get(task.node_name)
            if found is None:
                return
            if not placing:
                found.count(vgpu.decode((task.pod["metadata"].get("annotations") or {}).get(vgpu.ASSIGNED_IDS, "")))
                return
            verdict = vgpu.choose(task.pod, found, self.policy, commit=True)
            if not verdict.fits:
                log.warning("deviceshare: no vGPU on %s left for %s/%s: %s", task.node_name, task.namespace, task.name, verdict.reason)
                return
            self.vgpu_taken[task.uid] = (task.node_name, [list(container) for container in verdict.uses])
            task.bind_annotations.update(vgpu.bind_annotations(task.node_name, verdict.uses))
            return
        memory, cards = self.wants(task)
        devices = self.shared.get(task.node_name)
        if not (memory or cards) or devices is None:
            return
        if not placing:
            devices.add_pod(task.uid, task.pod, gpushare.gpu_index(task.pod))
            return
        ids = devices.cards_for_memory(memory)[:1] if memory else devices.cards_for_number(cards)
        if not ids:
            log.warning("deviceshare: no card on %s left for %s/%s", task.node_name, task.namespace, task.name)
            return
        devices.add_pod(task.uid, task.pod, ids)
        task.bind_annotations.update(gpushare.bind_annotations(ids))
        log.debug("deviceshare: %s/%s gets cards %s on %s", task.namespace, task.name, ids, task.node_name)

    def deallocated(self, task: job_info.TaskInfo) -> None:
        """A placement taken back frees its cards and drops its annotations; an evicted pod keeps
        its vGPUs until it is gone, as upstream's vGPU Release does nothing. Upstream: Release."""
        for devices in self.shared.values():
            if devices is not None:
                devices.remove_pod(task.uid)
        taken = self.vgpu_taken.pop(task.uid, None)
        if taken is not None:
            found = self.vgpus.get(taken[0])
            if found is not None:
                found.uncount(taken[1])
        for key in (gpushare.GPU_INDEX, gpushare.PREDICATE_TIME, *vgpu.bind_annotations("", ()).keys()):
            task.bind_annotations.pop(key, None)

    def on_session_close(self, ssn: Session) -> None:
        return None
