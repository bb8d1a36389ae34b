"""Device profiles: the GPU, NUMA and supernode shape of a cluster, as data.

A profile (YAML, checked against `profile.schema.json` and then cross-checked) lists node groups
(count, CPUs and memory per NUMA node, kubelet policies, reservations, labels, taints, GPUs with
their resource name, model, memory, NUMA node and link matrix) and the HyperNode tiers that group
the nodes (the supernodes are one of them). Loading it gives a `Profile` whose every node is
spelled out, so what is advertised (`advertise`), what a device plugin serves (`device_set`) and
what a scheduler is judged against all come from one description.

Built-in profiles live in `profiles/<name>.yaml`; a scenario may name one or write one inline.
"""

from __future__ import annotations

import dataclasses
import functools
import pathlib
from typing import IO, Any, Mapping, Sequence

from fake_devices import profile_check, profile_layout, quantity, yamlpos
from fake_devices.deviceplugin import devices

PROFILES_DIR = pathlib.Path(__file__).with_name("profiles")
NODE = "Node"
HYPERNODE = "HyperNode"


@dataclasses.dataclass(frozen=True)
class LocatedProblem:
    """A problem with its file and line: `profiles/x.yaml:12: nodes[0].gpus.numa[3]: expected ...`."""

    file: str
    line: int  # 1-based; 0 when unknown
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class ProfileError(ValueError):
    """A profile that cannot be used; lists every problem found, one per line."""

    def __init__(self, problems: Sequence[LocatedProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclasses.dataclass(frozen=True)
class NumaNode:
    id: int
    cpus: tuple[int, ...]  # CPU ids, numbered on across NUMA nodes
    memory_bytes: int


@dataclasses.dataclass(frozen=True)
class Gpu:
    index: int
    id: str
    numa: int
    healthy: bool = True


@dataclasses.dataclass(frozen=True)
class Gpus:
    """The GPUs of one node: one extended resource, one model."""

    resource: str
    model: str
    memory_bytes: int  # per GPU; 0 when the profile gives none
    devices: tuple[Gpu, ...]
    links: tuple[tuple[int, ...], ...]  # links[i][j]: the score of the link between GPUs i and j
    # vGPUs per GPU when Volcano's vGPU device plugin serves them (0: a plain device plugin).
    vgpu_split: int = 0

    def healthy(self) -> int:
        return sum(1 for gpu in self.devices if gpu.healthy)


@dataclasses.dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclasses.dataclass(frozen=True)
class Node:
    name: str
    pods: int
    numa: tuple[NumaNode, ...]
    cpu_manager_policy: str
    topology_manager_policy: str
    reserved_cpus: int
    reserved_memory_bytes: int
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[Taint, ...] = ()
    gpus: Gpus | None = None

    def cpus(self) -> int:
        return sum(len(n.cpus) for n in self.numa)

    def memory_bytes(self) -> int:
        return sum(n.memory_bytes for n in self.numa)


@dataclasses.dataclass(frozen=True)
class HyperNode:
    name: str
    tier: int
    tier_name: str
    member_type: str  # Node (tier 1) or HyperNode
    members: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Profile:
    name: str
    description: str
    nodes: tuple[Node, ...]
    hypernodes: tuple[HyperNode, ...] = ()
    supernode_tier: int | None = None

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"profile {self.name!r} has no node {name!r}; its nodes: {', '.join(n.name for n in self.nodes)}")

    def tiers(self) -> int:
        return max((h.tier for h in self.hypernodes), default=0)

    def hypernodes_of(self, node_name: str) -> dict[int, str]:
        """Tier -> the HyperNode of that tier the node is in (directly or through the tiers below)."""
        found: dict[int, str] = {}
        current = {node_name}
        for tier in range(1, self.tiers() + 1):
            holders = [h.name for h in self.hypernodes if h.tier == tier and current & set(h.members)]
            if not holders:
                break
            found[tier] = holders[0]
            current = set(holders)
        return found

    def supernode_of(self, node_name: str) -> str | None:
        """The supernode (HyperNode of `supernode_tier`) the node is in; None outside any."""
        return self.hypernodes_of(node_name).get(self.supernode_tier) if self.supernode_tier else None


def _gpus(doc: Mapping[str, Any], numa_count: int) -> Gpus:
    numa = profile_layout.gpu_numa(doc, numa_count)
    prefix = profile_layout.gpu_id_prefix(doc)
    unhealthy = set(doc.get("unhealthy") or [])
    return Gpus(
        resource=str(doc["resource"]),
        model=str(doc.get("model", "")),
        memory_bytes=quantity.bytes_of(doc["memory"]) if "memory" in doc else 0,
        devices=tuple(Gpu(i, f"{prefix}-{i}", n, i not in unhealthy) for i, n in enumerate(numa)),
        links=tuple(tuple(row) for row in profile_layout.gpu_links(doc, numa)),
        vgpu_split=int((doc.get("vgpu") or {}).get("split", 0)),
    )


def _nodes(group: Mapping[str, Any], names: Sequence[str]) -> list[Node]:
    numa: list[NumaNode] = []
    next_cpu = 0
    for i, (cpus, memory) in enumerate(profile_layout.numa_nodes(group)):
        numa.append(NumaNode(i, tuple(range(next_cpu, next_cpu + cpus)), memory))
        next_cpu += cpus
    kubelet, reserved = group.get("kubelet") or {}, group.get("reserved") or {}
    gpus = _gpus(group["gpus"], len(numa)) if group.get("gpus") else None
    return [
        Node(
            name=name,
            pods=int(group.get("pods", profile_layout.DEFAULT_PODS)),
            numa=tuple(numa),
            cpu_manager_policy=str(kubelet.get("cpuManagerPolicy", "none")),
            topology_manager_policy=str(kubelet.get("topologyManagerPolicy", "none")),
            reserved_cpus=int(reserved.get("cpu", 0)),
            reserved_memory_bytes=quantity.bytes_of(reserved["memory"]) if "memory" in reserved else 0,
            labels=tuple((str(k), str(v)) for k, v in (group.get("labels") or {}).items()),
            taints=tuple(Taint(str(t["key"]), str(t.get("value", "")), str(t["effect"])) for t in group.get("taints") or []),
            gpus=gpus,
        )
        for name in names
    ]


def _hypernodes(tiers: Sequence[Mapping[str, Any]], node_names: Sequence[str]) -> list[HyperNode]:
    out: list[HyperNode] = []
    below: list[str] = list(node_names)
    for tier in tiers:
        level = int(tier["tier"])
        made = [
            HyperNode(name, level, str(tier.get("tierName", "")), NODE if level == 1 else HYPERNODE, tuple(members))
            for name, members in profile_layout.tier_hypernodes(tier, below)
        ]
        out += made
        below = [h.name for h in made]
    return out


def from_document(doc: Any, name: str = "<profile>") -> Profile:
    """The Profile a document describes; ProfileError (lines unknown) listing every problem."""
    found = profile_check.problems(doc)
    if found:
        raise ProfileError([LocatedProblem(name, 0, yamlpos.format_path(p.path), p.message) for p in found])
    groups = doc["nodes"]
    nodes = [node for group, names in zip(groups, profile_layout.node_names(groups), strict=True) for node in _nodes(group, names)]
    return Profile(
        name=str(doc["name"]),
        description=str(doc.get("description", "")).strip(),
        nodes=tuple(nodes),
        hypernodes=tuple(_hypernodes(doc.get("tiers") or [], [n.name for n in nodes])),
        supernode_tier=doc.get("supernodeTier"),
    )


def load_stream(stream: IO[str] | IO[bytes], name: str) -> Profile:
    """The profile in `stream`; ProfileError naming `name` and the line of every problem."""
    raw = stream.read()
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        doc, pos = yamlpos.parse(text)
    except UnicodeDecodeError as err:
        raise ProfileError([LocatedProblem(name, 0, "", f"not UTF-8 text: {err}")]) from err
    except yamlpos.YamlError as err:
        raise ProfileError([LocatedProblem(name, err.line, "", str(err))]) from err
    located = [LocatedProblem(name, line, yamlpos.format_path(path), f"duplicate key {key!r} (YAML keeps only the last)") for path, key, line in pos.duplicates]
    located += [LocatedProblem(name, pos.line(p.path), yamlpos.format_path(p.path), p.message) for p in profile_check.problems(doc)]
    if located:
        raise ProfileError(located)
    return from_document(doc, name)


def load_file(path: pathlib.Path) -> Profile:
    try:
        with open(path, "rb") as stream:
            return load_stream(stream, str(path))
    except OSError as err:
        raise ProfileError([LocatedProblem(str(path), 0, "", f"cannot read: {err.strerror}")]) from err


def builtin_names() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


@functools.lru_cache(maxsize=None)
def builtin(name: str) -> Profile:
    """A built-in profile by name; ProfileError listing the known names when there is none."""
    path = PROFILES_DIR / f"{name}.yaml"
    if "/" in name or not path.is_file():
        raise ProfileError([LocatedProblem("profile", 0, "", f"no built-in profile named {name!r}; expected one of: {', '.join(builtin_names())}")])
    return load_file(path)


def device_set(node: Node) -> devices.DeviceSet:
    """What a device plugin serving this node's GPUs advertises: ids, NUMA nodes, health, links."""
    if node.gpus is None:
        raise ValueError(f"node {node.name} has no GPUs in its profile, so there is no device set to serve; give its group a gpus entry")
    gpus = node.gpus
    return devices.DeviceSet(
        resource_name=gpus.resource,
        devices=tuple(devices.Device(id=g.id, numa_node=g.numa, healthy=g.healthy) for g in gpus.devices),
        links=gpus.links,
    )
