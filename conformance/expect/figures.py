"""Figures: numbers a scenario measures from the observed state (a `measure` step), for the report
and for comparisons between two moments of one scenario (with a plugin off, then on).

A figure is a measurement, not a verdict: a `measure` step only judges when it names a bound or an
earlier figure to compare with.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Mapping

from kubernetes.utils import quantity

from conformance.cluster import resources
from conformance.expect import select
from conformance.observe import recorder
from conformance.scenario import models

NODE = resources.lookup("Node")
# Pods in these phases hold nothing on their node any more.
FINISHED_PHASES = ("Succeeded", "Failed")
NO_LABEL = "(no label)"


@dataclasses.dataclass(frozen=True)
class Measured:
    # Figure name -> value; one entry for a count, one per label value for a placement.
    values: dict[str, float]
    # What the figure was computed from, for a reader: which nodes, which pods.
    detail: str


def pod_request(pod: Mapping[str, Any], resource: str) -> float:
    """What a pod asks of `resource`, as the scheduler counts it: the sum over its containers (a
    limit stands for a missing request, as the API server defaults it for extended resources), or
    the largest init container's if that is more."""
    spec = pod.get("spec") or {}

    def one(container: Mapping[str, Any]) -> float:
        res = container.get("resources") or {}
        value = (res.get("requests") or {}).get(resource, (res.get("limits") or {}).get(resource))
        return float(quantity.parse_quantity(value)) if value is not None else 0.0

    running = sum(one(c) for c in spec.get("containers") or [])
    init = max((one(c) for c in spec.get("initContainers") or []), default=0.0)
    return max(running, init)


def _allocatable(node: Mapping[str, Any], resource: str) -> float:
    value = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
    return float(quantity.parse_quantity(value)) if value is not None else 0.0


def used_by_node(view: recorder.View, resource: str) -> dict[str, float]:
    """How much of `resource` the observed, unfinished pods bound to each node request."""
    used: dict[str, float] = collections.defaultdict(float)
    for pod in view.of(select.POD).values():
        node = (pod.get("spec") or {}).get("nodeName")
        if node and (pod.get("status") or {}).get("phase") not in FINISHED_PHASES:
            used[node] += pod_request(pod, resource)
    return used


def fragmented_nodes(view: recorder.View, figure: str, resource: str) -> Measured:
    """Nodes whose `resource` is partly taken: some is requested by pods and some is left. The
    leftover on such a node is a fragment a larger request can no longer use; a node that is
    wholly free or wholly taken is not fragmented."""
    used = used_by_node(view, resource)
    fragmented, per_node = [], []
    for key in sorted(view.of(NODE), key=lambda k: k[1]):
        node = view.of(NODE)[key]
        name = node["metadata"]["name"]
        total = _allocatable(node, resource)
        if total <= 0:
            continue
        taken = used.get(name, 0.0)
        per_node.append(f"{name} {taken:g}/{total:g}")
        if 0 < taken < total:
            fragmented.append(name)
    detail = f"fragmented: {fragmented or 'none'}; {resource} requested/allocatable per node: {', '.join(per_node) or 'no node has any'}"
    return Measured({figure: float(len(fragmented))}, detail)


def placement(view: recorder.View, figure: str, pod_select: Mapping[str, Any], label: str) -> Measured:
    """How many of the selected, bound pods run on nodes of each value of a node label, as one
    figure per value ("<figure>: <value>")."""
    counts: dict[str, int] = collections.Counter()
    where: dict[str, list[str]] = collections.defaultdict(list)
    for pod in select.pods(view, pod_select):
        node_name = (pod.get("spec") or {}).get("nodeName")
        if not node_name:
            continue
        node = view.named(NODE, node_name) or {}
        value = ((node.get("metadata") or {}).get("labels") or {}).get(label, NO_LABEL)
        counts[value] += 1
        where[value].append(f"{pod['metadata']['name']}@{node_name}")
    detail = "; ".join(f"{value}: {', '.join(pods)}" for value, pods in sorted(where.items())) or "no selected pod is bound"
    return Measured({f"{figure}: {value}": float(n) for value, n in sorted(counts.items())}, detail)


def measure(view: recorder.View, spec: Mapping[str, Any]) -> Measured:
    figure = spec["figure"]
    if "fragmented_nodes" in spec:
        return fragmented_nodes(view, figure, spec["fragmented_nodes"]["resource"])
    where = spec["placement"]
    return placement(view, figure, where.get("select") or {}, where["by"])


# A measure step's optional check, by its key (models.MEASURE_COMPARISONS): how it reads, whether it holds.
_RULES = {
    "less_than": ("fewer than", lambda value, bound: value < bound),
    "more_than": ("more than", lambda value, bound: value > bound),
    "at_most": ("at most", lambda value, bound: value <= bound),
    "at_least": ("at least", lambda value, bound: value >= bound),
    "equals": ("exactly", lambda value, bound: value == bound),
}
COMPARISONS: dict[str, tuple[str, Callable[[float, float], bool]]] = {key: _RULES[key] for key in models.MEASURE_COMPARISONS}
