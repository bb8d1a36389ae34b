"""GPU sharing and GPU number, deviceshare's `GpuShare` device: a node's GPUs as cards, and the
cards a pod's containers are given.

A node takes part when its `status.capacity` has both `volcano.sh/gpu-memory` (all cards' memory)
and a non-zero `volcano.sh/gpu-number` (the cards): each card has the total divided by the number
(whole units), less the cards its annotation `volcano.sh/gpu-unhealthy-ids` (a comma list of card
ids) names. A pod's want is read from its containers' `limits` (the largest init container's when
more): `volcano.sh/gpu-memory` to share a card, `volcano.sh/gpu-number` for whole cards. The
scheduler writes the cards it chose into the pod's annotation `volcano.sh/gpu-index` (`0`, or
`0,1`) with `volcano.sh/predicate-time` (nanoseconds since the epoch) before it binds the pod, and
counts a bound pod on the cards its annotation names.

- Sharing: the pod goes to the first card (by id) whose memory not taken by unfinished pods
  covers its want; a node with none fails with `GpuShare no enough gpu memory on node N`.
- Number: the pod takes that many idle cards (no pod at all on them), lowest ids first (upstream
  takes them in map order); a node with too few fails with `GpuNumber no enough gpu number on
  node N`.

Upstream: pkg/scheduler/api/devices/nvidia/gpushare/ (device_info.go, share.go, type.go);
docs/user-guide/how_to_use_gpu_sharing.md, how_to_use_gpu_number.md.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from reference_scheduler.kube import quantity

DEVICE_NAME = "GpuShare"
GPU_MEMORY = "volcano.sh/gpu-memory"
GPU_NUMBER = "volcano.sh/gpu-number"
GPU_INDEX = "volcano.sh/gpu-index"
PREDICATE_TIME = "volcano.sh/predicate-time"
UNHEALTHY_IDS = "volcano.sh/gpu-unhealthy-ids"


def _whole(value: Any) -> int:
    try:
        return int(quantity.parse(value))
    except ValueError:
        return 0


def _limit(container: dict[str, Any], name: str) -> int:
    return _whole(((container.get("resources") or {}).get("limits") or {}).get(name, 0))


def pod_want(pod: dict[str, Any], name: str) -> int:
    """The pod's want of `name` from its containers' limits: their sum, or the largest init
    container's when that is more. Upstream: getGPUMemoryOfPod, getGPUNumberOfPod."""
    spec = pod.get("spec") or {}
    containers = sum(_limit(c, name) for c in spec.get("containers") or [])
    init = max((_limit(c, name) for c in spec.get("initContainers") or []), default=0)
    return max(containers, init)


def gpu_index(pod: dict[str, Any]) -> list[int]:
    """The cards the pod's annotation names ([] when absent or malformed). Upstream: GetGPUIndex."""
    value = (pod["metadata"].get("annotations") or {}).get(GPU_INDEX)
    if value is None:
        return []
    try:
        return [int(part) for part in str(value).split(",")]
    except ValueError:
        return []


@dataclasses.dataclass
class Card:
    id: int
    memory: int
    # The pods given this card: uid -> the memory it takes (0 once it has finished).
    pods: dict[str, int] = dataclasses.field(default_factory=dict)

    def used_memory(self) -> int:
        return sum(self.pods.values())

    def idle(self) -> bool:
        return not self.pods


@dataclasses.dataclass
class GpuShareDevices:
    node: str
    cards: dict[int, Card]

    @classmethod
    def of_node(cls, node: dict[str, Any]) -> GpuShareDevices | None:
        """The node's cards, None when it does not advertise both resources. Upstream: NewGPUDevices."""
        capacity = (node.get("status") or {}).get("capacity") or {}
        if GPU_MEMORY not in capacity or GPU_NUMBER not in capacity:
            return None
        number = _whole(capacity[GPU_NUMBER])
        if number == 0:
            return None
        per_card = _whole(capacity[GPU_MEMORY]) // number
        cards = {i: Card(i, per_card) for i in range(number)}
        unhealthy = (node["metadata"].get("annotations") or {}).get(UNHEALTHY_IDS)
        for part in str(unhealthy).split(",") if unhealthy else ():
            if part.strip().lstrip("-").isdigit():
                cards.pop(int(part), None)
        return cls(node["metadata"]["name"], cards)

    def add_pod(self, uid: str, pod: dict[str, Any], ids: list[int]) -> None:
        """Count the pod on the cards (a finished pod takes no memory). Upstream: AddResource."""
        phase = (pod.get("status") or {}).get("phase")
        memory = 0 if phase in ("Succeeded", "Failed") else pod_want(pod, GPU_MEMORY)
        for card_id in ids:
            card = self.cards.get(card_id)
            if card is not None:
                card.pods[uid] = memory

    def remove_pod(self, uid: str) -> None:
        for card in self.cards.values():
            card.pods.pop(uid, None)

    def cards_for_memory(self, want: int) -> list[int]:
        """Cards with that much memory free, by id. Upstream: predicateGPUbyMemory."""
        return sorted(card.id for card in self.cards.values() if card.memory - card.used_memory() >= want)

    def cards_for_number(self, want: int) -> list[int]:
        """`want` idle cards, lowest ids first; [] when there are not enough. Upstream: predicateGPUbyNumber."""
        idle = sorted(card.id for card in self.cards.values() if card.idle())
        return idle[:want] if len(idle) >= want else []


def bind_annotations(ids: list[int]) -> dict[str, str]:
    """What the scheduler writes on the pod. Upstream: AddGPUIndexPatch."""
    return {PREDICATE_TIME: str(time.time_ns()), GPU_INDEX: ",".join(str(i) for i in ids)}
