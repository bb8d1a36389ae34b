"""vGPU, deviceshare's `hamivgpu` device: GPUs shared by Volcano's vGPU device plugin (hami-core),
each by at most `split` pods, by memory (MiB) and by cores (percent of the card).

A node takes part when the device plugin registered its GPUs in the annotation
`volcano.sh/node-vgpu-register` (per GPU `uuid,split,memoryMiB,type,healthy,mode:`) and keeps the
handshake annotation `volcano.sh/node-vgpu-handshake` alive: the scheduler answers a report with
`Requesting_<local time>`, and a request older than 60 s that the plugin did not answer (or a
`Deleted` handshake) takes the node's vGPUs out (`Deleted_<local time>`). A pod asks per container
in its limits: `volcano.sh/vgpu-number` cards (1 when it gives only memory),
`volcano.sh/vgpu-memory` MiB on each (else `volcano.sh/vgpu-memory-percentage` of the card, else
the whole card) and `volcano.sh/vgpu-cores` percent of each; its annotation
`volcano.sh/vgpu-mode` must match the node's mode; `nvidia.com/use-gputype` and
`nvidia.com/nouse-gputype` (comma lists) keep it to or off card types.

Cards are tried from the highest index down; a card takes the pod while fewer than `split` pods
share it, its free memory covers the request, its cores stay within 100 (100 asks for a card no
one else uses; 0 is refused on a card whose cores are all taken). The scheduler writes the choice
on the pod before binding it: `volcano.sh/vgpu-ids-new` and `volcano.sh/devices-to-allocate`
(`uuid,NVIDIA,memory,cores:` per card, `;` between containers), `volcano.sh/vgpu-node`,
`volcano.sh/vgpu-time` and `volcano.sh/bind-time` (Unix seconds), `volcano.sh/bind-phase:
allocating`; a bound pod counts on the cards its `volcano.sh/vgpu-ids-new` names.

Upstream: pkg/scheduler/api/devices/nvidia/vgpu/ (device_info.go, utils.go, hamicore.go, type.go),
pkg/scheduler/api/devices/config/ (vgpu.go, config.go: the default resource names);
docs/user-guide/how_to_use_volcano_vgpu.md. Kit choices: MIG mode needs the geometries of the
device plugin's ConfigMap, which the reference does not read, so a MIG node is treated as
hami-core, as upstream falls back when it finds no geometry; upstream's `volcano.sh/vgpu-memory-
percentage` below 100 divides in integers and asks for no memory, and so does this.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import time
from typing import Any

from reference_scheduler.kube import quantity

DEVICE_NAME = "hamivgpu"
REGISTER = "volcano.sh/node-vgpu-register"
HANDSHAKE = "volcano.sh/node-vgpu-handshake"
VGPU_NUMBER = "volcano.sh/vgpu-number"
VGPU_MEMORY = "volcano.sh/vgpu-memory"
VGPU_MEMORY_PERCENTAGE = "volcano.sh/vgpu-memory-percentage"
VGPU_CORES = "volcano.sh/vgpu-cores"
MODE_ANNOTATION = "volcano.sh/vgpu-mode"
USE_TYPE = "nvidia.com/use-gputype"
NOUSE_TYPE = "nvidia.com/nouse-gputype"
ASSIGNED_IDS = "volcano.sh/vgpu-ids-new"
TO_ALLOCATE = "volcano.sh/devices-to-allocate"
ASSIGNED_NODE = "volcano.sh/vgpu-node"
ASSIGNED_TIME = "volcano.sh/vgpu-time"
BIND_TIME = "volcano.sh/bind-time"
BIND_PHASE = "volcano.sh/bind-phase"
HAMI_CORE = "hami-core"
NVIDIA = "NVIDIA"
# How long a `Requesting_` handshake waits for the device plugin's answer.
HANDSHAKE_TIMEOUT = datetime.timedelta(seconds=60)
# Go's "2006.01.02 15:04:05", the handshake's time layout.
TIME_LAYOUT = "%Y.%m.%d %H:%M:%S"
NO_PERCENTAGE = 101
BINPACK = "binpack"
SPREAD = "spread"


def handshake(annotations: dict[str, str], now: datetime.datetime) -> tuple[bool, str | None]:
    """(may the node's vGPUs be used, the handshake to write back or None). `now` is aware.
    Upstream: NewGPUDevices (the time is written in local time and read back as UTC, as there)."""
    value = annotations.get(HANDSHAKE)
    if REGISTER not in annotations or value is None:
        return False, None
    stamp = now.astimezone().strftime(TIME_LAYOUT)
    if "Requesting" in value:
        parts = value.split("_")
        try:
            asked = datetime.datetime.strptime(parts[1], TIME_LAYOUT).replace(tzinfo=datetime.timezone.utc)
        except (IndexError, ValueError):
            asked = datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
        if now > asked + HANDSHAKE_TIMEOUT:
            return False, f"Deleted_{stamp}"
        return True, None
    if "Deleted" in value:
        return False, None
    return True, f"Requesting_{stamp}"


@dataclasses.dataclass
class Card:
    index: int
    uuid: str
    split: int
    memory: int
    type: str
    used_num: int = 0
    used_mem: int = 0
    used_core: int = 0


@dataclasses.dataclass(frozen=True)
class Use:
    """One card given to one container: what the pod annotation records."""

    uuid: str
    type: str
    memory: int
    cores: int


def _atoi(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


@dataclasses.dataclass
class VgpuDevices:
    node: str
    mode: str
    cards: dict[int, Card]

    @classmethod
    def decode(cls, node: str, register: str) -> VgpuDevices | None:
        """The registered cards, None when there are none or an entry is malformed.
        Upstream: decodeNodeDevices."""
        if ":" not in register:
            return None
        cards: dict[int, Card] = {}
        for index, entry in enumerate(register.split(":")):
            if "," not in entry:
                continue
            items = entry.split(",")
            if len(items) < 6:
                return None
            cards[index] = Card(index, items[0], _atoi(items[1]), _atoi(items[2]), items[3])
        return cls(node, HAMI_CORE, cards) if cards else None

    def count(self, uses: list[list[Use]]) -> None:
        """Count a bound pod's cards (each the first whose uuid its record contains). Upstream: AddResource."""
        for container in uses:
            for use in container:
                card = next((c for _, c in sorted(self.cards.items()) if c.uuid in use.uuid), None)
                if card is not None:
                    card.used_num += 1
                    card.used_mem += use.memory
                    card.used_core += use.cores

    def uncount(self, uses: list[list[Use]]) -> None:
        for container in uses:
            for use in container:
                card = next((c for _, c in sorted(self.cards.items()) if c.uuid in use.uuid), None)
                if card is not None:
                    card.used_num -= 1
                    card.used_mem -= use.memory
                    card.used_core -= use.cores


@dataclasses.dataclass
class Request:
    number: int
    memory: int
    percentage: int
    cores: int


def _whole(value: Any) -> int | None:
    try:
        number = quantity.parse(value)
    except ValueError:
        return None
    return int(number) if number == int(number) else None


def _amount(resources: dict[str, Any], name: str) -> Any:
    for part in ("limits", "requests"):
        found = (resources.get(part) or {}).get(name)
        if found is not None:
            return found
    return None


def requests(pod: dict[str, Any]) -> list[Request]:
    """One request per container that asks for vGPUs. Upstream: resourcereqs."""
    out = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        limits = resources.get("limits") or {}
        if VGPU_NUMBER not in limits and VGPU_MEMORY not in limits:
            continue
        number = _whole(limits[VGPU_NUMBER]) or 0 if VGPU_NUMBER in limits else 1
        memory = _whole(_amount(resources, VGPU_MEMORY)) or 0
        percentage = _whole(_amount(resources, VGPU_MEMORY_PERCENTAGE))
        percentage = NO_PERCENTAGE if percentage is None else percentage
        if percentage == NO_PERCENTAGE and memory == 0:
            percentage = 100
        cores = _whole(_amount(resources, VGPU_CORES)) or 0
        out.append(Request(number, memory, percentage, cores))
    return out


def asks(pod: dict[str, Any]) -> bool:
    """Upstream: checkVGPUResourcesInPod."""
    return any(VGPU_NUMBER in limits or VGPU_MEMORY in limits for limits in (((c.get("resources") or {}).get("limits") or {}) for c in (pod.get("spec") or {}).get("containers") or []))


def _type_allowed(annotations: dict[str, str], card_type: str) -> bool:
    """Upstream: checkType, checkGPUtype."""
    if NVIDIA not in card_type:
        return False
    upper = card_type.upper()
    if USE_TYPE in annotations:
        return any(part.upper() in upper for part in annotations[USE_TYPE].split(","))
    if NOUSE_TYPE in annotations:
        return not any(part.upper() in upper for part in annotations[NOUSE_TYPE].split(","))
    return True


def _score(policy: str, card: Card) -> float:
    """Upstream: GPUScore (the card as it would be with the pod)."""
    if policy == BINPACK:
        return 100.0 * card.used_mem / card.memory if card.memory else 0.0
    if policy == SPREAD:
        return 100.0 if card.used_num == 1 else 0.0
    return 0.0


@dataclasses.dataclass(frozen=True)
class Verdict:
    fits: bool
    reason: str = ""
    uses: tuple[tuple[Use, ...], ...] = ()
    score: float = 0.0


def choose(pod: dict[str, Any], devices: VgpuDevices, policy: str, commit: bool) -> Verdict:
    """The cards for each container of the pod, and the node's score by `policy`; with `commit`
    the cards' use is counted. Upstream: checkNodeGPUSharingPredicateAndScore."""
    if not asks(pod):
        return Verdict(True)
    annotations = pod["metadata"].get("annotations") or {}
    wanted_mode = annotations.get(MODE_ANNOTATION)
    if wanted_mode is not None and wanted_mode != devices.mode:
        return Verdict(False, f"pod required sharing mode {wanted_mode} is not the same as the node mode {devices.mode}")
    cards = devices.cards if commit else {i: dataclasses.replace(c) for i, c in devices.cards.items()}
    chosen: list[tuple[Use, ...]] = []
    score = 0.0
    for request in requests(pod):
        if request.number > len(cards):
            return Verdict(False, f"no enough gpu cards on node {devices.node}")
        left, memory, uses = request.number, request.memory, []
        for index in range(len(cards) - 1, -1, -1):
            card = cards.get(index)
            if card is None or card.split <= card.used_num:
                continue
            if request.percentage != NO_PERCENTAGE and memory == 0:
                memory = card.memory * (request.percentage // 100)
            if card.memory - card.used_mem < memory or card.used_core + request.cores > 100:
                continue
            if (request.cores == 100 and card.used_num > 0) or (card.used_core == 100 and request.cores == 0):
                continue
            if not _type_allowed(annotations, card.type):
                continue
            card.used_num += 1
            card.used_mem += memory
            card.used_core += request.cores
            if left > 0:
                left -= 1
                uses.append(Use(card.uuid, NVIDIA, memory, request.cores))
                score += _score(policy, card)
            if left == 0:
                break
        if left > 0:
            return Verdict(False, "not enough gpu fitted on this node")
        chosen.append(tuple(uses))
    return Verdict(True, "", tuple(chosen), score)


def encode(uses: tuple[tuple[Use, ...], ...]) -> str:
    """Upstream: encodePodDevices."""
    return ";".join("".join(f"{u.uuid},{u.type},{u.memory},{u.cores}:" for u in container) for container in uses)


def decode(text: str) -> list[list[Use]]:
    """A pod's recorded cards. Upstream: decodePodDevices."""
    out = []
    for container in text.split(";") if text else []:
        uses = []
        for entry in container.split(":"):
            items = entry.split(",")
            if len(items) >= 4:
                uses.append(Use(items[0], items[1], _atoi(items[2]), _atoi(items[3])))
        out.append(uses)
    return out


def bind_annotations(node: str, uses: tuple[tuple[Use, ...], ...]) -> dict[str, str]:
    """What the scheduler writes on the pod. Upstream: GPUDevices.Allocate."""
    now = str(int(time.time()))
    encoded = encode(uses)
    return {ASSIGNED_NODE: node, ASSIGNED_TIME: now, ASSIGNED_IDS: encoded, TO_ALLOCATE: encoded, BIND_PHASE: "allocating", BIND_TIME: now}


def node_score(score: float, weight: int) -> float:
    """deviceshare's node order: the device score rounded half up, times the weight. Upstream: getDeviceScore."""
    return float(math.floor(score + 0.5) * weight)
