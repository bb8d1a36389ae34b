"""Node specs: what nodes a cluster should have, parsed from `--nodes SPEC` or a scenario's `cluster`.

SPEC is one or more node groups separated by `;`. A group is `COUNT`, or `COUNT:key=value,...`, or
`key=value,...` (one node). Keys: `cpu`, `memory`, `pods`, `prefix`, `label:KEY=VALUE`,
`taint:KEY=VALUE:EFFECT` (or `taint:KEY:EFFECT`), and any resource name with a `/` (an extended
resource, `nvidia.com/gpu=8`). Example: `4:cpu=8,memory=32Gi;2:cpu=16,nvidia.com/gpu=8,label:gpu=yes`.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Sequence

DEFAULT_CPU = "32"
DEFAULT_MEMORY = "128Gi"
DEFAULT_PODS = 110
DEFAULT_PREFIX = "vck-node"
DEFAULT_SPEC = "4"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# The annotation kwok's controller selects the nodes it manages by (kwokctl's default selector).
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
# The label every kit node carries, and the scheduler's `--node-selector` item that selects them.
KIT_NODE_LABEL = ("type", "kwok")
KIT_NODE_SELECTOR = f"{KIT_NODE_LABEL[0]}:{KIT_NODE_LABEL[1]}"
# A real node lent to a scenario that runs real containers (`real_nodes`) for that scenario's time:
# the scheduler under test selects it beside the kwok nodes (a node selector's labels are ORed, as
# vc-scheduler's are). Not the kwok label: kind's own DaemonSets (kube-proxy) and Volcano's pods
# are kept off `type=kwok` nodes, and a DaemonSet's pod leaves a node that stops matching.
LENT_NODE_LABEL = ("conformance.vck.io/lent", "true")
LENT_NODE_SELECTOR = f"{LENT_NODE_LABEL[0]}:{LENT_NODE_LABEL[1]}"
# The labels a control plane's nodes carry (kubeadm's, and its older one): never lent to a scenario.
CONTROL_PLANE_LABELS = ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")
# The node quantities the kit accepts (a plain subset of Kubernetes' form); the scenario schema's
# `quantity` has the same pattern.
QUANTITY_PATTERN = r"^[0-9]+(\.[0-9]+)?(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$"
_QUANTITY = re.compile(QUANTITY_PATTERN)
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class NodeSpecError(ValueError):
    """A node spec that cannot be used; the message quotes the part at fault and the expected form."""


@dataclasses.dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def to_api(self) -> dict[str, str]:
        taint = {"key": self.key, "effect": self.effect}
        if self.value:
            taint["value"] = self.value
        return taint


@dataclasses.dataclass(frozen=True)
class NodeGroup:
    """`count` identical nodes."""

    count: int = 1
    cpu: str = DEFAULT_CPU
    memory: str = DEFAULT_MEMORY
    pods: int = DEFAULT_PODS
    prefix: str = DEFAULT_PREFIX
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[Taint, ...] = ()
    # Extended resources, such as ("nvidia.com/gpu", "8").
    extended: tuple[tuple[str, str], ...] = ()
    # Container images the nodes already hold (status.images): each image's names and size in
    # bytes, as a kubelet reports them (what image locality scores).
    images: tuple[tuple[tuple[str, ...], int], ...] = ()

    def resources(self) -> dict[str, str]:
        return {"cpu": self.cpu, "memory": self.memory, "pods": str(self.pods), **dict(self.extended)}


def _quantity(key: str, value: str, group: str) -> str:
    if not _QUANTITY.match(value):
        raise NodeSpecError(f"node spec {group!r}: {key}={value!r} is not a Kubernetes quantity (examples: 8, 500m, 32Gi)")
    return value


def _taint(text: str, group: str) -> Taint:
    key_value, _, effect = text.rpartition(":")
    key, _, value = key_value.partition("=")
    if not key or effect not in TAINT_EFFECTS:
        raise NodeSpecError(f"node spec {group!r}: taint {text!r} should be KEY=VALUE:EFFECT or KEY:EFFECT with EFFECT one of {', '.join(TAINT_EFFECTS)}")
    return Taint(key=key, value=value, effect=effect)


def parse_group(text: str) -> NodeGroup:
    group = text.strip()
    head, sep, rest = group.partition(":")
    count = 1
    if head.strip().isdigit():
        count = int(head)
        body = rest if sep else ""
    else:
        body = group
    fields: dict[str, Any] = {"count": count}
    labels: list[tuple[str, str]] = []
    taints: list[Taint] = []
    extended: list[tuple[str, str]] = []
    for item in filter(None, (p.strip() for p in body.split(","))):
        if item.startswith("taint:"):
            taints.append(_taint(item[len("taint:"):], group))
            continue
        key, eq, value = item.partition("=")
        if not eq:
            raise NodeSpecError(f"node spec {group!r}: {item!r} should be key=value")
        if key.startswith("label:"):
            labels.append((key[len("label:"):], value))
        elif key in ("cpu", "memory"):
            fields[key] = _quantity(key, value, group)
        elif key == "pods":
            if not value.isdigit():
                raise NodeSpecError(f"node spec {group!r}: pods={value!r} should be a whole number")
            fields["pods"] = int(value)
        elif key == "prefix":
            if not _NAME.match(value):
                raise NodeSpecError(f"node spec {group!r}: prefix={value!r} should be a DNS-1123 label (lower case, digits, '-')")
            fields["prefix"] = value
        elif "/" in key:
            extended.append((key, _quantity(key, value, group)))
        else:
            raise NodeSpecError(f"node spec {group!r}: unknown key {key!r}; use cpu, memory, pods, prefix, label:K=V, taint:K=V:EFFECT or a resource name with '/'")
    if count < 1:
        raise NodeSpecError(f"node spec {group!r}: the count should be at least 1")
    return NodeGroup(labels=tuple(labels), taints=tuple(taints), extended=tuple(extended), **fields)


def parse(spec: str | None) -> tuple[NodeGroup, ...]:
    """Every group of a SPEC string (the default, four large nodes, when empty)."""
    text = (spec or DEFAULT_SPEC).strip()
    return tuple(parse_group(g) for g in text.split(";") if g.strip())


def node_names(groups: Sequence[NodeGroup]) -> list[str]:
    """Names numbered per prefix across groups: vck-node-0, vck-node-1, ..."""
    counters: dict[str, int] = {}
    names = []
    for group in groups:
        for _ in range(group.count):
            index = counters.get(group.prefix, 0)
            counters[group.prefix] = index + 1
            names.append(f"{group.prefix}-{index}")
    return names


def node_ip(index: int) -> str:
    """A stable InternalIP per node (documentation data only: nothing is ever sent to it)."""
    return f"10.200.{index // 250}.{index % 250 + 1}"


def kwok_node(name: str, group: NodeGroup, index: int = 0) -> dict[str, Any]:
    """A Node manifest that kwok's controller adopts and keeps Ready."""
    resources = group.resources()
    labels: Mapping[str, str] = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        KIT_NODE_LABEL[0]: KIT_NODE_LABEL[1],
        **dict(group.labels),
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": dict(labels), "annotations": {KWOK_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"taints": [t.to_api() for t in group.taints]} if group.taints else {},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "addresses": [{"type": "InternalIP", "address": node_ip(index)}, {"type": "Hostname", "address": name}],
            **({"images": [{"names": list(names), "sizeBytes": size} for names, size in group.images]} if group.images else {}),
        },
    }


def kwok_nodes(groups: Sequence[NodeGroup]) -> list[dict[str, Any]]:
    flat = [g for g in groups for _ in range(g.count)]
    return [kwok_node(name, group, i) for i, (name, group) in enumerate(zip(node_names(groups), flat, strict=True))]
