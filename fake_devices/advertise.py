"""What a profile's nodes advertise through the API: the facts a scheduler (or another
implementation's topology discovery) reads, in the places real clusters put them.

- Node `status.capacity` / `status.allocatable`: CPUs, memory, pods and the GPU resource. The
  kubelet's reservation comes off allocatable, and so do unhealthy GPUs (a kubelet leaves an
  unhealthy device out of allocatable).
- Node labels: GPU model, count and memory; NUMA node count; supernode; the profile; NVIDIA GPU
  feature discovery's names for `nvidia.com/gpu`; Volcano's label-discovery names for tiers 1-2.
- Node annotations: the GPU topology and the NUMA topology, as JSON; for GPUs served by Volcano's
  vGPU device plugin, its registration and handshake (and its resources in place of the GPUs').
- A Numatopology (nodeinfo.volcano.sh/v1alpha1) per node, shaped as Volcano's resource exporter
  writes it, and a HyperNode (topology.volcano.sh/v1alpha1) per profile HyperNode.

Everything here is data: the kit (or `python -m fake_devices.advertise`) sends it. fake_devices/
README.md lists every name and says where it comes from.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
from typing import Any, Mapping, Sequence

import yaml

from fake_devices import profile, quantity

DOMAIN = "devices.vck.io"
PROFILE_LABEL = f"{DOMAIN}/profile"
GPU_MODEL_LABEL = f"{DOMAIN}/gpu-model"
GPU_COUNT_LABEL = f"{DOMAIN}/gpu-count"
GPU_MEMORY_LABEL = f"{DOMAIN}/gpu-memory"  # MiB per GPU, as GPU feature discovery writes it
NUMA_NODES_LABEL = f"{DOMAIN}/numa-nodes"
SUPERNODE_LABEL = f"{DOMAIN}/supernode"
GPU_TOPOLOGY_ANNOTATION = f"{DOMAIN}/gpu-topology"
NUMA_TOPOLOGY_ANNOTATION = f"{DOMAIN}/numa-topology"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "vck-fake-devices"
# NVIDIA GPU feature discovery's labels (k8s-device-plugin docs/gpu-feature-discovery), set only
# for nvidia.com/gpu: schedulers and manifests in the wild select on these names.
NVIDIA_RESOURCE = "nvidia.com/gpu"
NVIDIA_PRODUCT_LABEL = "nvidia.com/gpu.product"
NVIDIA_COUNT_LABEL = "nvidia.com/gpu.count"
NVIDIA_MEMORY_LABEL = "nvidia.com/gpu.memory"
# The labels of Volcano's HyperNode label-discovery example (docs/user-guide/
# how_to_use_hypernode_auto_discovery.md): the tier-1 and tier-2 HyperNode of a node.
VOLCANO_TIER_LABELS = {1: "volcano.sh/hypernode", 2: "volcano.sh/hypercluster"}
# Numatopology policy keys (volcano.sh/apis nodeinfo/v1alpha1 PolicyName).
CPU_MANAGER_POLICY = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY = "TopologyManagerPolicy"
NUMATOPOLOGY_API = "nodeinfo.volcano.sh/v1alpha1"
# What Volcano's vGPU device plugin (Project-HAMi/volcano-vgpu-device-plugin) puts on a node, as
# Volcano v1.13's deviceshare reads it (pkg/scheduler/api/devices/config/vgpu.go,
# nvidia/vgpu/utils.go decodeNodeDevices): per GPU `id,split,memoryMiB,type,healthy,mode:`, and a
# handshake the plugin renews ("Reported ...") and the scheduler answers ("Requesting_...").
VGPU_REGISTER_ANNOTATION = "volcano.sh/node-vgpu-register"
VGPU_HANDSHAKE_ANNOTATION = "volcano.sh/node-vgpu-handshake"
VGPU_NUMBER = "volcano.sh/vgpu-number"
VGPU_MEMORY = "volcano.sh/vgpu-memory"
VGPU_MODE = "hami-core"
# A fixed report time, so a profile always advertises the same node.
VGPU_REPORTED = "Reported 2026-01-01 00:00:00 +0000 UTC"
HYPERNODE_API = "topology.volcano.sh/v1alpha1"


def is_advertised(key: str) -> bool:
    """Whether a label or annotation key is one this module writes: a node that carries one the
    current profile does not want still shows an earlier profile and must be reshaped."""
    return key.startswith(f"{DOMAIN}/") or key in (
        NVIDIA_PRODUCT_LABEL, NVIDIA_COUNT_LABEL, NVIDIA_MEMORY_LABEL, *VOLCANO_TIER_LABELS.values(), VGPU_REGISTER_ANNOTATION, VGPU_HANDSHAKE_ANNOTATION,
    )


@dataclasses.dataclass(frozen=True)
class NodeAdvert:
    """What one simulated node shows: merged into its Node object by whoever creates it."""

    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    capacity: Mapping[str, str]
    allocatable: Mapping[str, str]
    taints: tuple[profile.Taint, ...]


def cpuset(ids: Sequence[int]) -> str:
    """Linux cpuset list format, as the kubelet and Numatopology write it: `0-3,8,10-11`."""
    ranges: list[list[int]] = []
    for cpu in sorted(ids):
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def _mib(value: int) -> int:
    return value // quantity.MIB


def gpu_topology(node: profile.Node) -> dict[str, Any]:
    """The GPU topology annotation's content: per GPU its id, index, NUMA node, memory, health
    and links (peer id -> score; a peer that is not listed has no link)."""
    gpus = node.gpus
    if gpus is None:
        return {}
    return {
        "resource": gpus.resource,
        "model": gpus.model,
        "memoryMiB": _mib(gpus.memory_bytes),
        "gpus": [
            {
                "id": gpu.id,
                "index": gpu.index,
                "numa": gpu.numa,
                "memoryMiB": _mib(gpus.memory_bytes),
                "healthy": gpu.healthy,
                "links": {peer.id: gpus.links[gpu.index][peer.index] for peer in gpus.devices if peer.index != gpu.index and gpus.links[gpu.index][peer.index]},
            }
            for gpu in gpus.devices
        ],
    }


def vgpu_register(gpus: profile.Gpus) -> str:
    """The vGPU device plugin's registration: each GPU (healthy or not) with how many vGPUs share
    it, its memory in MiB, its type (`NVIDIA-<model>`, as the plugin names it from NVML) and health."""
    kind = f"NVIDIA-{gpus.model}" if gpus.model else "NVIDIA"
    return "".join(f"{gpu.id},{gpus.vgpu_split},{_mib(gpus.memory_bytes)},{kind},{str(gpu.healthy).lower()},{VGPU_MODE}:" for gpu in gpus.devices)


def numa_topology(node: profile.Node) -> dict[str, Any]:
    """The NUMA topology annotation's content: per NUMA node its CPUs, memory and GPUs (memory per
    NUMA node has no place in a Numatopology, so it is here)."""
    gpus = node.gpus.devices if node.gpus else ()
    return {
        "numaNodes": [
            {"id": n.id, "cpus": cpuset(n.cpus), "cpuCount": len(n.cpus), "memory": quantity.format_bytes(n.memory_bytes), "gpus": [g.id for g in gpus if g.numa == n.id]}
            for n in node.numa
        ]
    }


def node_labels(prof: profile.Profile, node: profile.Node) -> dict[str, str]:
    labels = {PROFILE_LABEL: prof.name, NUMA_NODES_LABEL: str(len(node.numa))}
    if node.gpus is not None:
        gpus = node.gpus
        labels[GPU_COUNT_LABEL] = str(len(gpus.devices))
        if gpus.model:
            labels[GPU_MODEL_LABEL] = gpus.model
        if gpus.memory_bytes:
            labels[GPU_MEMORY_LABEL] = str(_mib(gpus.memory_bytes))
        if gpus.resource == NVIDIA_RESOURCE:
            labels[NVIDIA_COUNT_LABEL] = str(len(gpus.devices))
            if gpus.model:
                labels[NVIDIA_PRODUCT_LABEL] = gpus.model
            if gpus.memory_bytes:
                labels[NVIDIA_MEMORY_LABEL] = str(_mib(gpus.memory_bytes))
    for tier, name in prof.hypernodes_of(node.name).items():
        if tier in VOLCANO_TIER_LABELS:
            labels[VOLCANO_TIER_LABELS[tier]] = name
    supernode = prof.supernode_of(node.name)
    if supernode:
        labels[SUPERNODE_LABEL] = supernode
    # The profile's own labels come last: an author who writes a label means it.
    return {**labels, **dict(node.labels)}


def node(prof: profile.Profile, node: profile.Node) -> NodeAdvert:
    capacity = {"cpu": str(node.cpus()), "memory": quantity.format_bytes(node.memory_bytes()), "pods": str(node.pods)}
    allocatable = {
        "cpu": str(node.cpus() - node.reserved_cpus),
        "memory": quantity.format_bytes(node.memory_bytes() - node.reserved_memory_bytes),
        "pods": str(node.pods),
    }
    annotations = {NUMA_TOPOLOGY_ANNOTATION: _json(numa_topology(node))}
    gpus = node.gpus
    if gpus is not None and gpus.vgpu_split:
        # The vGPU device plugin serves vGPUs and their memory instead of whole GPUs.
        capacity[VGPU_NUMBER] = str(len(gpus.devices) * gpus.vgpu_split)
        allocatable[VGPU_NUMBER] = str(gpus.healthy() * gpus.vgpu_split)
        capacity[VGPU_MEMORY] = str(len(gpus.devices) * _mib(gpus.memory_bytes))
        allocatable[VGPU_MEMORY] = str(gpus.healthy() * _mib(gpus.memory_bytes))
        annotations[VGPU_REGISTER_ANNOTATION] = vgpu_register(gpus)
        annotations[VGPU_HANDSHAKE_ANNOTATION] = VGPU_REPORTED
    elif gpus is not None:
        capacity[gpus.resource] = str(len(gpus.devices))
        allocatable[gpus.resource] = str(gpus.healthy())
    if gpus is not None:
        annotations[GPU_TOPOLOGY_ANNOTATION] = _json(gpu_topology(node))
    return NodeAdvert(node.name, node_labels(prof, node), annotations, capacity, allocatable, node.taints)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _meta(prof: profile.Profile, name: str) -> dict[str, Any]:
    return {"name": name, "labels": {MANAGED_BY_LABEL: MANAGED_BY, PROFILE_LABEL: prof.name}}


def numatopology(prof: profile.Profile, node: profile.Node) -> dict[str, Any]:
    """The node's Numatopology, named after it, as Volcano's resource exporter writes one: the
    kubelet's CPU and topology manager policies, the reservation, the allocatable CPUs (the
    reserved CPUs are the lowest-numbered, as the static CPU manager takes them) and each CPU's
    NUMA node, socket (one per NUMA node here) and core."""
    cpus = [cpu for n in node.numa for cpu in n.cpus]
    reserved = {}
    if node.reserved_cpus:
        reserved["cpu"] = str(node.reserved_cpus)
    if node.reserved_memory_bytes:
        reserved["memory"] = quantity.format_bytes(node.reserved_memory_bytes)
    spec: dict[str, Any] = {
        "policies": {CPU_MANAGER_POLICY: node.cpu_manager_policy, TOPOLOGY_MANAGER_POLICY: node.topology_manager_policy},
        "numares": {"cpu": {"allocatable": cpuset(cpus[node.reserved_cpus:]), "capacity": len(cpus)}},
        "cpuDetail": {str(cpu): {"numa": n.id, "socket": n.id, "core": cpu} for n in node.numa for cpu in n.cpus},
    }
    if reserved:
        spec["resReserved"] = reserved
    return {"apiVersion": NUMATOPOLOGY_API, "kind": "Numatopology", "metadata": _meta(prof, node.name), "spec": spec}


def hypernode(prof: profile.Profile, hn: profile.HyperNode) -> dict[str, Any]:
    """A HyperNode whose members are named one by one (exactMatch), as Volcano's e2e writes them."""
    spec: dict[str, Any] = {"tier": hn.tier}
    if hn.tier_name:
        spec["tierName"] = hn.tier_name
    spec["members"] = [{"type": hn.member_type, "selector": {"exactMatch": {"name": m}}} for m in hn.members]
    return {"apiVersion": HYPERNODE_API, "kind": "HyperNode", "metadata": _meta(prof, hn.name), "spec": spec}


def objects(prof: profile.Profile) -> list[dict[str, Any]]:
    """The cluster-scoped objects a profile adds: a Numatopology per node, then the HyperNodes
    from the lowest tier up."""
    return [numatopology(prof, n) for n in prof.nodes] + [hypernode(prof, h) for h in sorted(prof.hypernodes, key=lambda h: h.tier)]


def node_manifest(advert: NodeAdvert) -> dict[str, Any]:
    """A plain Node object carrying the advert (a simulator adds its own bookkeeping to it)."""
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": advert.name, "labels": dict(advert.labels), "annotations": dict(advert.annotations)},
        "spec": {},
        "status": {"capacity": dict(advert.capacity), "allocatable": dict(advert.allocatable)},
    }
    if advert.taints:
        manifest["spec"]["taints"] = [{"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect} for t in advert.taints]
    return manifest


def render(prof: profile.Profile) -> list[dict[str, Any]]:
    """Every object the profile advertises: Nodes, Numatopologies, HyperNodes."""
    return [node_manifest(node(prof, n)) for n in prof.nodes] + objects(prof)


def main(argv: list[str] | None = None) -> int:
    """`python -m fake_devices.advertise PROFILE`: print what a profile advertises, as YAML."""
    parser = argparse.ArgumentParser(prog="python -m fake_devices.advertise", description=main.__doc__)
    parser.add_argument("profile", help=f"a built-in profile ({', '.join(profile.builtin_names())}) or a profile file")
    args = parser.parse_args(argv)
    try:
        path = pathlib.Path(args.profile)
        prof = profile.load_file(path) if path.suffix in (".yaml", ".yml") else profile.builtin(args.profile)
    except profile.ProfileError as err:
        print(err, file=sys.stderr)
        return 2
    yaml.safe_dump_all(render(prof), sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
