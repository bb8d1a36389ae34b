"""The tree hierarchical DRF (HDRF) keeps: queues placed by their `volcano.sh/hierarchy` path
(`root/eng/dev`, one weight per level from `volcano.sh/hierarchy-weights`), jobs as leaves.

Why a tree and not flat weights: a parent's share is built from its children rescaled to the
smallest dominant share among those still demanding, so a child with a complementary dominant
resource is not starved, and a saturated child (it has all it asked for, or asks for a resource
the cluster has run out of) neither blocks its siblings nor is favoured. Queues compare level by
level: at the first level where their ancestors differ in share divided by weight, the smaller
goes first; a saturated node goes last.

Upstream: pkg/scheduler/plugins/drf/drf.go (hierarchicalNode, buildHierarchy,
updateHierarchicalShare, compareQueues), docs/design/hdrf.md. The kit's own code.
"""

from __future__ import annotations

import dataclasses

# A resource vector in drf's terms: every resource the cluster has, plus `pods` (one per task),
# as Volcano's Resource counts it.
Vector = dict[str, float]
PODS = "pods"
# Volcano ignores a resource dimension below this amount (minResource).
MIN_RESOURCE = 0.1


def names(vector: Vector) -> list[str]:
    return [name for name, value in vector.items() if value >= MIN_RESOURCE]


def add(into: Vector, other: Vector, factor: float = 1.0) -> Vector:
    for name, value in other.items():
        into[name] = into.get(name, 0.0) + value * factor
    return into


def dominant_share(allocated: Vector, total: Vector) -> tuple[str, float]:
    """The resource whose allocated fraction of the cluster is largest, and that fraction.
    Upstream: drfPlugin.calculateShare, helpers.Share."""
    best, share = "", 0.0
    for name in names(total):
        fraction = allocated.get(name, 0.0) / total[name]
        if fraction > share:
            best, share = name, fraction
    return best, share


@dataclasses.dataclass
class Attr:
    allocated: Vector = dataclasses.field(default_factory=dict)
    share: float = 0.0
    dominant: str = ""

    def update(self, total: Vector) -> None:
        self.dominant, self.share = dominant_share(self.allocated, total)

    def copy(self) -> Attr:
        return Attr(dict(self.allocated), self.share, self.dominant)


@dataclasses.dataclass
class Node:
    name: str
    weight: float
    attr: Attr
    request: Vector = dataclasses.field(default_factory=dict)
    saturated: bool = False
    # None for a job (a leaf); queue levels have a dict, possibly empty.
    children: dict[str, Node] | None = dataclasses.field(default_factory=dict)

    def copy(self) -> Node:
        children = None if self.children is None else {k: c.copy() for k, c in self.children.items()}
        return Node(self.name, self.weight, self.attr.copy(), dict(self.request), self.saturated, children)


def new_root() -> Node:
    return Node("root", 1.0, Attr())


def _weight(weights: list[str], level: int) -> float:
    """The weight of a level; missing, unreadable or below 1 counts as 1, as upstream's parse does."""
    try:
        value = float(weights[level])
    except (IndexError, ValueError):
        return 1.0
    return max(value, 1.0)


def place_job(root: Node, job_uid: str, attr: Attr, request: Vector, hierarchy: str, weights: str) -> None:
    """Create the queue levels on the job's path that do not exist yet and (re)attach the job as a
    leaf sharing `attr`. Upstream: buildHierarchy."""
    node = root
    paths = hierarchy.split("/")
    weight_list = weights.split("/")
    for level in range(1, len(paths)):
        assert node.children is not None
        child = node.children.get(paths[level])
        if child is None or child.children is None:
            child = node.children[paths[level]] = Node(paths[level], _weight(weight_list, level), Attr())
        node = child
    assert node.children is not None
    node.children[job_uid] = Node(job_uid, 1.0, attr, dict(request), children=None)


def saturated(allocated: Vector, request: Vector, demanding: set[str]) -> bool:
    """A job is saturated when it holds all it asks of some resource, or asks for a resource the
    cluster has none left of. Upstream: resourceSaturated."""
    for name in names(allocated):
        if allocated[name] != 0 and request.get(name, 0.0) != 0 and allocated[name] >= request[name]:
            return True
        if name not in demanding and request.get(name, 0.0) != 0:
            return True
    return False


def refresh(node: Node, total: Vector, demanding: set[str]) -> None:
    """Recompute saturation and shares bottom up: a level's usage is its saturated children as
    they are plus the others rescaled to the smallest dominant share among them.
    Upstream: updateHierarchicalShare (the recursive one)."""
    if node.children is None:
        node.saturated = saturated(node.attr.allocated, node.request, demanding)
        return
    smallest = 1.0
    for child in node.children.values():
        refresh(child, total, demanding)
        if child.attr.share != 0 and not child.saturated:
            smallest = min(smallest, dominant_share(child.attr.allocated, total)[1])
    usage: Vector = {}
    all_saturated = True
    for child in node.children.values():
        if not child.saturated:
            all_saturated = False
        if child.attr.share != 0:
            add(usage, child.attr.allocated, 1.0 if child.saturated else smallest / child.attr.share)
    node.attr.allocated = usage
    node.attr.update(total)
    node.saturated = all_saturated


def update(root: Node, total: Vector, total_allocated: Vector, job_uid: str, attr: Attr, request: Vector, hierarchy: str, weights: str) -> None:
    """Re-place the job and recompute the tree; a resource is still in demand while the cluster has
    some of it free. Upstream: UpdateHierarchicalShare."""
    demanding = {name for name in names(total) if total_allocated.get(name, 0.0) < total[name]}
    place_job(root, job_uid, attr, request, hierarchy, weights)
    refresh(root, total, demanding)


def compare_queues(root: Node, left: str, right: str) -> float:
    """Negative when the queue at path `left` goes first. Walk both paths from the root; at each
    level a non-saturated node beats a saturated one, then the smaller share per weight wins;
    equal ones look one level further down. Upstream: compareQueues."""
    left_paths, right_paths = left.split("/"), right.split("/")
    depth = min(len(left_paths), len(right_paths))
    lnode, rnode = root, root
    for level in range(depth):
        if lnode.saturated != rnode.saturated:
            return 1.0 if lnode.saturated else -1.0
        lvalue, rvalue = lnode.attr.share / lnode.weight, rnode.attr.share / rnode.weight
        if lvalue != rvalue:
            return lvalue - rvalue
        if level < depth - 1:
            lnext = (lnode.children or {}).get(left_paths[level + 1])
            rnext = (rnode.children or {}).get(right_paths[level + 1])
            if lnext is None or rnext is None:
                # A level without jobs under it has no share yet: nothing tells them apart.
                return 0.0
            lnode, rnode = lnext, rnext
    return 0.0
