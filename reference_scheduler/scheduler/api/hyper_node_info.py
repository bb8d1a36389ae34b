"""HyperNodes as one scheduling cycle sees them: each one's tier, parent and real nodes, the tiers
in use from the lowest up, the lowest-tier HyperNode of a node, and the least common ancestor of
two HyperNodes. Also a job's network topology (hard or soft, and the highest tier it may span)
and the HyperNode allocate records for it on its PodGroup.

Upstream: pkg/scheduler/api/hyper_node_info.go (HyperNodesInfo, GetMembers, GetAncestors,
GetLCAHyperNode), pkg/scheduler/util/scheduler_helper.go (GetRealNodesListByHyperNode,
FindHyperNodeForNode, FindJobTaskNumOfHyperNode), pkg/scheduler/api/job_info.go
(IsHardTopologyMode, IsSoftTopologyMode, HasTopologyConstrain) and well_known_labels.go.

Upstream keeps the tree up to date event by event; the kit builds it whole from the watched
objects once per cycle, which gives the same sets for the same objects.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Callable, Iterable, Mapping

from reference_scheduler.api import hypernode_members
from reference_scheduler.scheduler.api import job_info

log = logging.getLogger(__name__)
# Where allocate records the HyperNode a job's tasks were placed under (their least common
# ancestor). Upstream: api.JobAllocatedHyperNode.
ALLOCATED_HYPERNODE = "volcano.sh/job-allocated-hypernode"
HARD = "hard"
SOFT = "soft"


# --- a job's network topology --------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class NetworkTopology:
    mode: str
    highest_tier_allowed: int
    # `highestTierName` (v1.14): the tier named by the HyperNodes' spec.tierName; it stands for
    # highestTierAllowed and is translated when the tree is known (HyperNodesInfo.resolve).
    highest_tier_name: str = ""

    @property
    def hard(self) -> bool:
        return self.mode == HARD

    @property
    def soft(self) -> bool:
        return self.mode == SOFT


def network_topology(job: job_info.JobInfo) -> NetworkTopology | None:
    """The PodGroup's `spec.networkTopology`, None without one. A field left out takes the value
    Volcano's CRD defaults it to (mode hard, highestTierAllowed 1): the kit's CRDs keep the
    field free-form, so the scheduler applies those defaults where the API server would have."""
    return topology_of((job.podgroup.get("spec") or {}).get("networkTopology"), f"PodGroup {job.uid}")


def resolved_topology(job: job_info.JobInfo, tree: Callable[[], HyperNodesInfo]) -> NetworkTopology | None:
    """The job's topology with a highestTierName turned into its tier (HyperNodesInfo.resolve).
    `tree` gives the HyperNode tree, asked for only when the job has a topology (building it
    costs a pass over the nodes)."""
    topology = network_topology(job)
    return tree().resolve(topology) if topology is not None else None


def topology_of(spec: object, owner: str) -> NetworkTopology | None:
    """A `networkTopology` object (a PodGroup's or one of its subGroupPolicy entries')."""
    if not isinstance(spec, Mapping):
        return None
    name = str(spec.get("highestTierName") or "")
    highest = spec.get("highestTierAllowed", 0 if name else 1)
    try:
        tier = int(highest)
    except (TypeError, ValueError):
        log.warning("%s: networkTopology.highestTierAllowed %r is not an integer; using 1", owner, highest)
        tier = 1
    return NetworkTopology(str(spec.get("mode") or HARD), tier, name)


def allocated_hypernode(job: job_info.JobInfo) -> str:
    annotations = (job.podgroup.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(ALLOCATED_HYPERNODE) or "")


def set_allocated_hypernode(job: job_info.JobInfo, name: str) -> None:
    meta = job.podgroup.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if annotations is None:
        annotations = meta["annotations"] = {}
    annotations[ALLOCATED_HYPERNODE] = name


# --- the tree ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class HyperNodeInfo:
    name: str
    tier: int
    parent: str
    # The real nodes under it, at any depth; only nodes that exist. Upstream: RealNodesList.
    nodes: frozenset[str]
    # spec.tierName (v1.14): the name a topology's highestTierName refers to.
    tier_name: str = ""


class HyperNodesInfo:
    """The HyperNodes of one cycle. `ready` is False when the tree is inconsistent (a HyperNode
    with two parents, a cycle): upstream then places no job that has a hard topology."""

    def __init__(self, infos: Mapping[str, HyperNodeInfo], problems: Iterable[str] = ()) -> None:
        self.infos = dict(infos)
        self.problems = list(problems)
        self.ready = not self.problems
        by_tier: dict[int, list[str]] = {}
        for info in self.infos.values():
            by_tier.setdefault(info.tier, []).append(info.name)
        # Names in order, so the kit tries HyperNodes in a fixed order (upstream: a Go set).
        self.by_tier = {tier: sorted(names) for tier, names in sorted(by_tier.items())}
        self.tiers = list(self.by_tier)
        self._lowest_of_node: dict[str, str] = {}
        if self.tiers:
            for name in reversed(self.by_tier[self.tiers[0]]):
                for node in self.infos[name].nodes:
                    self._lowest_of_node[node] = name

    def __contains__(self, name: object) -> bool:
        return name in self.infos

    def resolve(self, topology: NetworkTopology) -> NetworkTopology:
        """The topology with a highestTierName turned into its tier. A name no HyperNode gives
        its tier is left as it is, with no tier: such a topology confines nothing (upstream
        leaves it untranslated, and without a tier it is not hard). Upstream:
        adjustNetworkTopologySpec."""
        if not topology.highest_tier_name:
            return topology
        tiers = {info.tier_name: info.tier for info in self.infos.values() if info.tier_name}
        if topology.highest_tier_name not in tiers:
            return NetworkTopology(SOFT if topology.soft else "", 0, topology.highest_tier_name)
        return NetworkTopology(topology.mode, tiers[topology.highest_tier_name], "")

    def within(self, name: str, ancestor: str) -> bool:
        """The HyperNode is the ancestor or lies below it."""
        return ancestor in self.ancestors(name)

    def tier(self, name: str) -> int:
        return self.infos[name].tier

    def nodes(self, name: str) -> frozenset[str]:
        info = self.infos.get(name)
        return info.nodes if info else frozenset()

    def hypernode_of_node(self, node: str) -> str:
        """The HyperNode of the lowest tier that holds the node ('' when none does); the first by
        name if several do. Upstream: FindHyperNodeForNode."""
        return self._lowest_of_node.get(node, "")

    def ancestors(self, name: str) -> list[str]:
        """The HyperNode itself, its parent, the parent's parent, up to a root."""
        chain = [name]
        current = self.infos.get(name)
        while current is not None and current.parent and current.parent not in chain:
            chain.append(current.parent)
            current = self.infos.get(current.parent)
        return chain

    def lca(self, left: str, right: str) -> str:
        """The least common ancestor of two HyperNodes, '' when they share none.
        Upstream: HyperNodeInfoMap.GetLCAHyperNode."""
        mine = set(self.ancestors(left))
        return next((a for a in self.ancestors(right) if a in mine), "")

    def task_count(self, name: str, job: job_info.JobInfo) -> int:
        """How many of the job's tasks sit on a node of the HyperNode.
        Upstream: FindJobTaskNumOfHyperNode."""
        nodes = self.nodes(name)
        return sum(1 for task in job.tasks.values() if task.node_name and task.node_name in nodes)


def build(hypernodes: Mapping[str, Mapping[str, Any]], nodes: Mapping[str, Mapping[str, str]]) -> HyperNodesInfo:
    """The tree from HyperNode objects by name and the cluster's nodes (name -> labels).
    Upstream: HyperNodesInfo.BuildHyperNodeCache, setParent, GetRealNodesListByHyperNode."""
    problems: list[str] = []
    tiers: dict[str, int] = {}
    members: dict[str, list[Mapping[str, Any]]] = {}
    for name in sorted(hypernodes):
        spec = hypernodes[name].get("spec") or {}
        try:
            tiers[name] = int(spec.get("tier") or 0)
        except (TypeError, ValueError):
            problems.append(f"HyperNode {name}: spec.tier {spec.get('tier')!r} is not an integer")
            tiers[name] = 0
        members[name] = [m for m in spec.get("members") or [] if isinstance(m, Mapping)]
    parents: dict[str, str] = {}
    for name in sorted(members):
        for member in members[name]:
            child = hypernode_members.child_hypernode(member) if member.get("type") == hypernode_members.MEMBER_HYPERNODE else ""
            if not child:
                continue
            if parents.setdefault(child, name) != name:
                problems.append(f"HyperNode {child} already has a parent {parents[child]}, and cannot set another parent {name}")
    real: dict[str, frozenset[str]] = {}

    def resolve(name: str, chain: tuple[str, ...]) -> frozenset[str]:
        if name in real:
            return real[name]
        if name in chain:
            problems.append(f"cyclic dependency detected: HyperNode {name} is already in the ancestor chain {sorted(chain)}")
            return frozenset()
        found: set[str] = set()
        for member in members.get(name, []):
            if member.get("type") == hypernode_members.MEMBER_NODE:
                found |= hypernode_members.members_of(member.get("selector") or {}, nodes)
            elif member.get("type") == hypernode_members.MEMBER_HYPERNODE:
                child = hypernode_members.child_hypernode(member)
                if child in members:
                    found |= resolve(child, chain + (name,))
        real[name] = frozenset(n for n in found if n in nodes)
        return real[name]

    infos = {name: HyperNodeInfo(name, tiers[name], parents.get(name, ""), resolve(name, ()), str((hypernodes[name].get("spec") or {}).get("tierName") or "")) for name in sorted(members)}
    for problem in problems:
        log.error("HyperNodes not ready: %s", problem)
    return HyperNodesInfo(infos, problems)
