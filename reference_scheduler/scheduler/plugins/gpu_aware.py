"""gpu-aware: score the nodes a GPU task may go to from their GPU topology and how closely their
free GPUs match the request, so that tasks fill partly used GPU nodes and leave whole ones whole.

Seed 002_61851c1e6fb0f74a.txt, section 7.2.2.1 documents the vendor's plugin: it scores
schedulable nodes from GPU topology combined with configured weights; `weight` is the plugin's
weight among plugins, `loss.weight` the weight of a topology-loss score (higher: less GPU
fragmentation); because of that score a task goes where free GPUs match its request exactly or
most closely. Its code is not public, so the formula is the kit's stated choice:

For a task asking for k GPUs of resource r (any resource some node names in its
`devices.vck.io/gpu-topology` annotation) and a node whose topology is of r:
- F = the node's free r: allocatable less what its pods request (counting pods being released
  as gone and pipelined tasks as landed, as allocate's fit check does);
- the node scores 0 when k > F (it cannot fit); otherwise
- L, the loss score = k / F: 1 when the task takes exactly the free GPUs and strands none, less
  the more it leaves behind (the closest match scores highest);
- T, the topology score = the quality of the best k of the node's healthy GPUs: the mean of
  (mean link score of their pairs / the largest link score in the cluster) and (1 / NUMA nodes
  they span); 1 for one GPU (gpu_aware_topology.py). The scheduler sees GPU counts, not which
  devices pods hold (the device plugin picks them), so T does not guess which ones are free;
- score = weight * 100 * ((1 - loss.weight) * T + loss.weight * L).
So loss.weight (0..1) shares the score between the two: 0 scores topology only, 1 the closeness
of the fit only, and the seed's 0.5 weighs them equally, which is enough for an exact fit to beat
an empty node of the same GPUs. Tasks without a GPU request are not scored (0 everywhere), nor are
nodes without a topology annotation of the task's resource. Arguments default to the seed's
example (weight 1, loss.weight 0.5); weight 0 turns the plugin off; a loss.weight above 1 counts
as 1; a negative or non-numeric value is logged and the default used.

Upstream: none (a vendor plugin; see seed 002). The node-order contract it plugs into is
pkg/scheduler/framework/session_plugins.go (NodeOrderFn, summed over plugins).
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info, node_matrix
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.plugins import gpu_aware_topology as topology

log = logging.getLogger(__name__)
NAME = "gpu-aware"
MAX_NODE_SCORE = 100.0
DEFAULT_WEIGHT = 1.0
DEFAULT_LOSS_WEIGHT = 0.5
EPSILON = node_matrix.EPSILON


def _number(arguments: Mapping[str, Any], key: str, default: float) -> float:
    value = arguments.get(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if number < 0 or number != number:  # negative or NaN
        log.warning("gpu-aware: %s=%r is not a number >= 0; using %g", key, value, default)
        return default
    return number


class NodeTopologies:
    """The session's GPU nodes: per matrix row its topology (or None), and topology scores per
    (resource, GPU count) as vectors over the rows, computed once per session."""

    def __init__(self, ssn: Session) -> None:
        self.matrix = ssn.matrix
        self.by_row = [topology.parse(node.node) for node in ssn.node_list()]
        self.resources = sorted({t.resource for t in self.by_row if t is not None})
        # One scale for the whole cluster, so better-linked GPUs score higher across node models.
        self.max_link = max((t.max_link for t in self.by_row if t is not None), default=0.0)
        self._scores: dict[tuple[str, int], np.ndarray] = {}

    def topology_scores(self, resource: str, count: int) -> np.ndarray:
        key = (resource, count)
        found = self._scores.get(key)
        if found is None:
            found = np.array([
                topology.best_quality(t, count, self.max_link) if t is not None and t.resource == resource else 0.0
                for t in self.by_row
            ])
            self._scores[key] = found
        return found


def scores(task: job_info.TaskInfo, nodes: NodeTopologies, weight: float, loss_weight: float) -> np.ndarray:
    """Every node's score for the task (zeros for a task without a GPU request)."""
    matrix = nodes.matrix
    total = np.zeros(len(matrix))
    for resource in nodes.resources:
        request = task.resreq.get(resource)
        j = matrix.column.get(resource)
        if request <= EPSILON or j is None:
            continue
        # GPUs are whole devices; a fractional request (not valid for extended resources) rounds up.
        count = int(np.ceil(request - EPSILON))
        free = matrix.allocatable[:, j] - matrix.used[:, j] + matrix.releasing[:, j] - matrix.pipelined[:, j]
        topo = nodes.topology_scores(resource, count)
        fits = (topo > 0) & (request <= free + EPSILON)
        loss = np.where(fits, request / np.where(fits, free, 1.0), 0.0)
        total += np.where(fits, (1 - loss_weight) * topo + loss_weight * loss, 0.0)
    out = total * (MAX_NODE_SCORE * weight)
    if log.isEnabledFor(logging.DEBUG):
        log.debug("gpu-aware: task %s: %s", task.name, {n: round(float(s), 2) for n, s in zip(matrix.names, out, strict=True) if s})
    return out


class GpuAware:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.weight = _number(arguments, "weight", DEFAULT_WEIGHT)
        # A share of the score: more than all of it means all of it.
        self.loss_weight = min(1.0, _number(arguments, "loss.weight", DEFAULT_LOSS_WEIGHT))

    def on_session_open(self, ssn: Session) -> None:
        if self.weight == 0:
            return
        nodes = NodeTopologies(ssn)
        if nodes.resources:
            ssn.add_batch_node_order_fn(NAME, lambda task: scores(task, nodes, self.weight, self.loss_weight))

    def on_session_close(self, ssn: Session) -> None:
        return None
