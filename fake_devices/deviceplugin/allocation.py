"""GetPreferredAllocation's choice: keep an allocation on one NUMA node, then on well-linked GPUs.

The kubelet asks for `allocation_size` devices out of `available`, which must include
`must_include`; its topology manager has already picked NUMA affinity for CPUs, so the plugin's
job is to pick, among equal-count choices, the devices that talk to each other fastest. The rule,
applied one device at a time after the must-include ones:

1. NUMA first. The allocation's home nodes are the NUMA nodes of the devices already chosen; with
   none chosen, the node that can hold the whole request with the fewest devices to spare (best
   fit, so bigger free blocks stay whole), else the node with the most free devices. A candidate
   on a home node beats any other.
2. Links next: among those, the candidate with the highest summed link score to the devices
   already chosen; once a home node runs out this is what picks the next node to spill onto.
3. Then the device set's own order, so the answer is deterministic.

Greedy, not optimal: a real plugin (NVIDIA's go-gpuallocator) searches harder; the fake needs a
rule a test can predict, not the best NVLink ring.
"""

from __future__ import annotations

import collections
import dataclasses
import logging

from fake_devices.deviceplugin import devices

logger = logging.getLogger(__name__)


class AllocationError(ValueError):
    """A request the plugin cannot answer; the message names the devices and what was expected."""


@dataclasses.dataclass(frozen=True)
class Request:
    """One container's ContainerPreferredAllocationRequest, as plain data."""

    available: tuple[str, ...]
    must_include: tuple[str, ...]
    size: int


def check(device_set: devices.DeviceSet, request: Request) -> None:
    """Raise AllocationError listing every way the request is malformed for this device set."""
    index = device_set.index()
    problems = []
    unknown = sorted({d for d in request.available + request.must_include if d not in index})
    if unknown:
        problems.append(f"unknown device ids {unknown} for {device_set.resource_name} (known: {sorted(index)})")
    missing = [d for d in request.must_include if d not in request.available]
    if missing:
        problems.append(f"must_include_deviceIDs {missing} are not in available_deviceIDs")
    if len(set(request.must_include)) > request.size:
        problems.append(f"allocation_size {request.size} is smaller than the {len(set(request.must_include))} must-include devices")
    if request.size > len(set(request.available)):
        problems.append(f"allocation_size {request.size} is larger than the {len(set(request.available))} available devices")
    if request.size < 0:
        problems.append(f"allocation_size: expected an integer >= 0, got {request.size}")
    if problems:
        raise AllocationError("; ".join(problems))


def preferred(device_set: devices.DeviceSet, request: Request) -> list[str]:
    """The preferred device ids for one container: must-include first, then by the module's rule."""
    check(device_set, request)
    index = device_set.index()
    chosen = list(dict.fromkeys(request.must_include))
    candidates = [d for d in dict.fromkeys(request.available) if d not in chosen]
    numa = {d.id: d.numa_node for d in device_set.devices}
    home = {numa[d] for d in chosen}
    if not home and request.size > 0:
        home = {_home_node(candidates, numa, request.size)}

    def rank(device_id: str) -> tuple[int, int, int]:
        links = sum(device_set.link(index[device_id], index[c]) for c in chosen)
        return (0 if numa[device_id] in home else 1, -links, index[device_id])

    while len(chosen) < request.size:
        best = min(candidates, key=rank)
        candidates.remove(best)
        chosen.append(best)
        home.add(numa[best])
    logger.debug("preferred allocation %s for %s", chosen, request)
    return chosen


def _home_node(candidates: list[str], numa: dict[str, int], need: int) -> int:
    """Best fit: the NUMA node whose free devices hold `need` with the fewest to spare."""
    free = collections.Counter(numa[d] for d in candidates)
    fitting = [node for node, n in free.items() if n >= need]
    if fitting:
        return min(fitting, key=lambda node: (free[node], node))
    return min(free, key=lambda node: (-free[node], node))
