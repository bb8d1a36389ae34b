"""nodeorder: kube-scheduler's scores summed with per-score weights (arguments
`leastrequested.weight` 1, `mostrequested.weight` 0, `balancedresource.weight` 1,
`nodeaffinity.weight` 2, `podaffinity.weight` 2, `tainttoleration.weight` 3,
`imagelocality.weight` 1; a weight of 0 turns its score off).

As upstream: least/most requested and balanced allocation over cpu and memory, 0..100 each; the
preferred node affinity score is the raw sum of matching terms' weights (upstream's per-node
function does not normalise it); the taint toleration and inter-pod affinity scores are normalised
across the nodes (fewest intolerable PreferNoSchedule taints: 100; pod affinity: min..max to
0..100); image locality from the nodes' status.images (`image_locality.py`). Not scored: default
pod topology spreading.

Upstream: pkg/scheduler/plugins/nodeorder/nodeorder.go (kube-scheduler's noderesources,
nodeaffinity, tainttoleration and interpodaffinity score plugins).
"""

from __future__ import annotations

import collections
import json
import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.kube import quantity
from reference_scheduler.scheduler.api import job_info, node_matrix
from reference_scheduler.scheduler.framework.session import EventHandler, Session
from reference_scheduler.scheduler.plugins import image_locality, node_fit

log = logging.getLogger(__name__)
NAME = "nodeorder"
MAX_NODE_SCORE = 100.0
DEFAULT_WEIGHTS = {
    "leastrequested.weight": 1, "mostrequested.weight": 0, "balancedresource.weight": 1,
    "nodeaffinity.weight": 2, "podaffinity.weight": 2, "tainttoleration.weight": 3,
    "imagelocality.weight": 1,
}
# kube-scheduler counts a container without requests as asking this much when it scores.
NON_ZERO_REQUEST = {"cpu": 100.0, "memory": float(quantity.parse("200Mi"))}
SCORED = ("cpu", "memory")


def weights(arguments: Mapping[str, Any]) -> dict[str, int]:
    found = dict(DEFAULT_WEIGHTS)
    for key in DEFAULT_WEIGHTS:
        if key in arguments:
            try:
                found[key] = int(arguments[key])
            except (TypeError, ValueError):
                log.warning("nodeorder: %s=%r is not an integer; using %d", key, arguments[key], found[key])
    return found


def requested_fractions(task: job_info.TaskInfo, matrix: node_matrix.NodeMatrix) -> np.ndarray:
    """Per node and scored resource: what would be requested with the task, over allocatable
    (nodes × 2; a resource the node does not have counts as full)."""
    out = np.ones((len(matrix), len(SCORED)))
    for k, name in enumerate(SCORED):
        j = matrix.column.get(name)
        if j is None:
            continue
        request = task.resreq.get(name) or NON_ZERO_REQUEST[name]
        capacity = matrix.allocatable[:, j]
        requested = matrix.used[:, j] + request
        out[:, k] = np.where(capacity > 0, requested / np.where(capacity > 0, capacity, 1), 1.0)
    return out


# Two scored resources: a mean is a half sum and a standard deviation half the difference,
# which numpy computes far faster than its general mean and std.
def least_requested(fractions: np.ndarray) -> np.ndarray:
    free = np.where(fractions > 1, 0.0, 1 - fractions)
    return (free[:, 0] + free[:, 1]) * (MAX_NODE_SCORE / 2)


def most_requested(fractions: np.ndarray) -> np.ndarray:
    used = np.where(fractions > 1, 0.0, fractions)
    return (used[:, 0] + used[:, 1]) * (MAX_NODE_SCORE / 2)


def balanced_allocation(fractions: np.ndarray) -> np.ndarray:
    """100 when cpu and memory would be equally used, less the more they differ."""
    clipped = np.minimum(fractions, 1.0)
    scores: np.ndarray = (1 - np.abs(clipped[:, 0] - clipped[:, 1]) / 2) * MAX_NODE_SCORE
    return scores


def reverse_normalise(counts: np.ndarray) -> np.ndarray:
    top = counts.max() if len(counts) else 0
    if top <= 0:
        return np.full(len(counts), MAX_NODE_SCORE)
    return MAX_NODE_SCORE - counts * MAX_NODE_SCORE / top


class NodeOrder:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.weights = weights(arguments)

    def on_session_open(self, ssn: Session) -> None:
        w = self.weights
        matrix = ssn.matrix
        nodes = ssn.node_list()
        labels = [n.labels for n in nodes]
        static: dict[str, np.ndarray] = {}
        images = image_locality.ImageStates([n.node for n in nodes]) if w["imagelocality.weight"] else None

        def spec_scores(pod: Mapping[str, Any]) -> np.ndarray:
            """Node affinity and taint toleration: fixed for the cycle, given the pod's spec."""
            spec = pod.get("spec") or {}
            key = json.dumps([(spec.get("affinity") or {}).get("nodeAffinity"), spec.get("tolerations")], sort_keys=True)
            found = static.get(key)
            if found is None:
                found = np.zeros(len(nodes))
                if w["nodeaffinity.weight"]:
                    found += w["nodeaffinity.weight"] * np.array([node_fit.preferred_node_affinity(pod, labels[i], nodes[i].name) for i in range(len(nodes))], dtype=float)
                if w["tainttoleration.weight"]:
                    tolerations = node_fit.tolerations_of(pod)
                    counts = np.array([len(node_fit.untolerated(tolerations, n.taints, ("PreferNoSchedule",))) for n in nodes], dtype=float)
                    found += w["tainttoleration.weight"] * reverse_normalise(counts)
                static[key] = found
            return found

        def pod_affinity(task: job_info.TaskInfo) -> np.ndarray | None:
            """The pod's preferred (anti-)affinity to placed pods, and placed pods' preferred
            (anti-)affinity to it, by topology domain; None when nobody has such terms."""
            own = [(t, 1) for t in node_fit.preferred_terms(task.pod, "podAffinity")] + [(t, -1) for t in node_fit.preferred_terms(task.pod, "podAntiAffinity")]
            by_domain: collections.Counter[tuple[str, str]] = collections.Counter()
            seen_terms = bool(own)
            for node, other in node_fit.placed_pods(nodes):
                for weighted, sign in own:
                    term = weighted.get("podAffinityTerm") or {}
                    key = term.get("topologyKey", "")
                    if key in node.labels and node_fit.term_matches_pod(term, task.namespace, other.pod):
                        by_domain[(key, node.labels[key])] += sign * int(weighted.get("weight") or 0)
                theirs = [(t, 1) for t in node_fit.preferred_terms(other.pod, "podAffinity")] + [(t, -1) for t in node_fit.preferred_terms(other.pod, "podAntiAffinity")]
                for weighted, sign in theirs:
                    seen_terms = True
                    term = weighted.get("podAffinityTerm") or {}
                    key = term.get("topologyKey", "")
                    if key in node.labels and node_fit.term_matches_pod(term, other.namespace, task.pod):
                        by_domain[(key, node.labels[key])] += sign * int(weighted.get("weight") or 0)
            if not seen_terms:
                return None
            raw = np.array([sum(v for (k, value), v in by_domain.items() if node_labels.get(k) == value) for node_labels in labels], dtype=float)
            spread = raw.max() - raw.min() if len(raw) else 0
            return (raw - raw.min()) * MAX_NODE_SCORE / spread if spread > 0 else np.zeros(len(raw))

        def score(task: job_info.TaskInfo) -> np.ndarray:
            total = spec_scores(task.pod).copy()
            if images is not None and images.spread:
                total += w["imagelocality.weight"] * images.scores(task.pod)
            if w["leastrequested.weight"] or w["mostrequested.weight"] or w["balancedresource.weight"]:
                fractions = requested_fractions(task, matrix)
                if w["leastrequested.weight"]:
                    total += w["leastrequested.weight"] * least_requested(fractions)
                if w["mostrequested.weight"]:
                    total += w["mostrequested.weight"] * most_requested(fractions)
                if w["balancedresource.weight"]:
                    total += w["balancedresource.weight"] * balanced_allocation(fractions)
            if w["podaffinity.weight"] and (placed_with_terms["any"] or node_fit.has_pod_affinity(task.pod)):
                affinity = pod_affinity(task)
                if affinity is not None:
                    total += w["podaffinity.weight"] * affinity
            return total

        # Whether any placed pod has preferred pod (anti-)affinity: when none has and the task has
        # none either, the inter-pod score is 0 everywhere and its scan is skipped.
        placed_with_terms = {"any": any(
            node_fit.preferred_terms(t.pod, "podAffinity") or node_fit.preferred_terms(t.pod, "podAntiAffinity")
            for _, t in node_fit.placed_pods(nodes)
        )}

        def placed(task: job_info.TaskInfo) -> None:
            if node_fit.preferred_terms(task.pod, "podAffinity") or node_fit.preferred_terms(task.pod, "podAntiAffinity"):
                placed_with_terms["any"] = True

        ssn.add_batch_node_order_fn(NAME, score)
        ssn.event_handlers.append(EventHandler(allocate=placed, deallocate=lambda task: None))

    def on_session_close(self, ssn: Session) -> None:
        return None
