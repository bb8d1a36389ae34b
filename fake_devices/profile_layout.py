"""How a profile's shorthand becomes names and numbers: node names, GPU ids, the NUMA node of each
GPU, the link matrix, and the HyperNodes of a tier.

One place for these rules, so the checks (profile_check) and the model (profile) can never
disagree about what a profile means. Every function takes schema-valid document parts.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from fake_devices import quantity

DEFAULT_CPU = 32
DEFAULT_MEMORY = "128Gi"
DEFAULT_PODS = 110
# {sameNuma, crossNuma} when a profile gives no links: the device plugin's synthetic default.
DEFAULT_SAME_NUMA_LINK = 2
DEFAULT_CROSS_NUMA_LINK = 1


def node_names(groups: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """Per group, its node names `<prefix>-<n>`, numbered per prefix across groups (as the kit
    numbers its plain node groups), so two groups with one prefix never collide."""
    counters: dict[str, int] = {}
    names: list[list[str]] = []
    for group in groups:
        prefix = str(group["prefix"])
        start = counters.get(prefix, 0)
        count = int(group.get("count", 1))
        counters[prefix] = start + count
        names.append([f"{prefix}-{start + i}" for i in range(count)])
    return names


def numa_nodes(group: Mapping[str, Any]) -> list[tuple[int, int]]:
    """(cpus, memory bytes) per NUMA node: the `numa` list, or one node of `cpu` and `memory`."""
    if group.get("numa"):
        return [(int(n["cpus"]), quantity.bytes_of(n["memory"])) for n in group["numa"]]
    return [(int(group.get("cpu", DEFAULT_CPU)), quantity.bytes_of(group.get("memory", DEFAULT_MEMORY)))]


def gpu_id_prefix(gpus: Mapping[str, Any]) -> str:
    """`idPrefix`, else the resource's name after the slash, `gpu` written `GPU` (GPU-0,
    Ascend910-0): the ids the device plugin's synthetic device sets use."""
    if gpus.get("idPrefix"):
        return str(gpus["idPrefix"])
    name = str(gpus["resource"]).rpartition("/")[2]
    return name.upper() if name == "gpu" else name


def gpu_numa(gpus: Mapping[str, Any], numa_count: int) -> list[int]:
    """The NUMA node of each GPU: as written, else contiguous balanced blocks (8 over 2: 0-3, 4-7)."""
    count = int(gpus["count"])
    if gpus.get("numa") is not None:
        return [int(n) for n in gpus["numa"]]
    return [i * numa_count // count for i in range(count)]


def gpu_links(gpus: Mapping[str, Any], numa: Sequence[int]) -> list[list[int]]:
    """The link score matrix: as written, or built from {sameNuma, crossNuma} (the default is
    2 and 1). The diagonal is 0: a GPU has no link to itself."""
    links = gpus.get("links")
    if isinstance(links, list):
        return [[int(v) for v in row] for row in links]
    same = int((links or {}).get("sameNuma", DEFAULT_SAME_NUMA_LINK))
    cross = int((links or {}).get("crossNuma", DEFAULT_CROSS_NUMA_LINK))
    return [[0 if i == j else (same if numa[i] == numa[j] else cross) for j in range(len(numa))] for i in range(len(numa))]


def tier_prefix(tier: Mapping[str, Any]) -> str:
    return str(tier.get("prefix") or f"tier{tier['tier']}")


def tier_hypernodes(tier: Mapping[str, Any], below: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(name, member names) of each HyperNode of a tier. `below` is what the tier groups: the
    profile's nodes in order for tier 1, the HyperNodes of the tier below otherwise.

    Explicit `hyperNodes` are taken as written. Otherwise `size` members each, in order, named
    `<prefix>-<n>` (the last may have fewer); without `size`, one HyperNode over all of `below`.
    """
    if tier.get("hyperNodes"):
        return [(str(h["name"]), [str(m) for m in h["members"]]) for h in tier["hyperNodes"]]
    size = int(tier.get("size") or len(below) or 1)
    prefix = tier_prefix(tier)
    return [(f"{prefix}-{i}", list(below[start:start + size])) for i, start in enumerate(range(0, len(below), size))]
