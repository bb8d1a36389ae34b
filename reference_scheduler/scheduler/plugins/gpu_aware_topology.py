"""GPU topology as a node advertises it, and how good a set of its GPUs can be: the topology half
of the gpu-aware score (see gpu_aware.py for the whole formula).

A node tells its GPU topology in the annotation `devices.vck.io/gpu-topology` (JSON, written by
fake_devices/advertise.py): the GPU resource name, and per GPU its id, NUMA node, health and link
scores to its peers (higher is better; an unlisted peer has no link).

The quality of a set S of k healthy GPUs is the mean of two parts, each 0..1:
- links: the mean link score over the pairs of S, over the largest link score in the cluster;
- NUMA: 1 / the number of NUMA nodes S spans.
A node's topology score for k GPUs is the quality of its best set of k healthy GPUs (one GPU: 1).
Every set is tried while there are at most MAX_EXHAUSTIVE; beyond that a greedy choice is made
(start from the best pair, add the GPU that adds the most), which is deterministic too.

Upstream: none. The vendor's gpu-aware plugin (seed 002_61851c1e6fb0f74a.txt, section 7.2.2.1)
is not public; this is the kit's stated choice.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import math
from typing import Any, Mapping, Sequence

log = logging.getLogger(__name__)
ANNOTATION = "devices.vck.io/gpu-topology"
MAX_EXHAUSTIVE = 20000


@dataclasses.dataclass(frozen=True)
class Gpu:
    id: str
    numa: int
    links: Mapping[str, float]


@dataclasses.dataclass(frozen=True)
class GpuTopology:
    """One node's GPUs of one resource; only the healthy ones (the others are not allocatable)."""

    resource: str
    healthy: tuple[Gpu, ...]

    @property
    def max_link(self) -> float:
        return max((score for gpu in self.healthy for score in gpu.links.values()), default=0.0)


def parse(node: Mapping[str, Any]) -> GpuTopology | None:
    """The node's topology annotation, or None when it has none or it does not parse (logged:
    such a node is simply not scored)."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    text = annotations.get(ANNOTATION)
    if not text:
        return None
    try:
        doc = json.loads(text)
        healthy = tuple(
            Gpu(str(g["id"]), int(g.get("numa", 0)), {str(k): float(v) for k, v in (g.get("links") or {}).items()})
            for g in doc["gpus"]
            if g.get("healthy", True)
        )
        return GpuTopology(str(doc["resource"]), healthy)
    except (ValueError, KeyError, TypeError) as err:
        name = (node.get("metadata") or {}).get("name")
        log.warning("gpu-aware: node %s: annotation %s is not a GPU topology (%s); the node is not scored", name, ANNOTATION, err)
        return None


def _quality(gpus: Sequence[Gpu], max_link: float) -> float:
    """0..1: the mean of the link part and the NUMA part of one set of GPUs."""
    if len(gpus) < 2:
        return 1.0
    pairs = list(itertools.combinations(gpus, 2))
    mean_link = sum(a.links.get(b.id, 0.0) for a, b in pairs) / len(pairs)
    link_part = mean_link / max_link if max_link > 0 else 1.0
    numa_part = 1.0 / len({gpu.numa for gpu in gpus})
    return (link_part + numa_part) / 2


def _greedy(gpus: Sequence[Gpu], count: int, max_link: float) -> float:
    best_pair = max(itertools.combinations(gpus, 2), key=lambda pair: _quality(pair, max_link))
    chosen = list(best_pair)
    rest = [gpu for gpu in gpus if gpu not in chosen]
    while len(chosen) < count:
        best = max(rest, key=lambda gpu: _quality([*chosen, gpu], max_link))
        chosen.append(best)
        rest.remove(best)
    return _quality(chosen, max_link)


def best_quality(topology: GpuTopology, count: int, max_link: float) -> float:
    """The node's topology score for `count` GPUs: its best set's quality; 0 when it has fewer
    healthy GPUs than that."""
    gpus = topology.healthy
    if count < 1 or count > len(gpus):
        return 0.0
    if count == 1:
        return 1.0
    if math.comb(len(gpus), count) > MAX_EXHAUSTIVE:
        return _greedy(gpus, count, max_link)
    return max(_quality(subset, max_link) for subset in itertools.combinations(gpus, count))
