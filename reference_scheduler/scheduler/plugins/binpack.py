"""binpack: score a node by how full it would be with the task, weighted per resource, so pods
pack onto fewer nodes. Arguments: binpack.weight (0 turns scoring off), binpack.cpu,
binpack.memory, binpack.resources (a comma list) with binpack.resources.<name> weights.

Upstream: pkg/scheduler/plugins/binpack/binpack.go.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info, node_matrix
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAME = "binpack"
MAX_NODE_SCORE = 100


def _int(arguments: Mapping[str, Any], key: str, default: int) -> int:
    try:
        return int(arguments.get(key, default))
    except (TypeError, ValueError):
        log.warning("binpack: %s=%r is not an integer; using %d", key, arguments.get(key), default)
        return default


def weights(arguments: Mapping[str, Any]) -> tuple[int, dict[str, int]]:
    """(the plugin's weight, the weight of each resource). Negative resource weights mean 1."""
    by_resource: dict[str, int] = {}
    for name in str(arguments.get("binpack.resources") or "").split(","):
        name = name.strip()
        if name:
            weight = _int(arguments, f"binpack.resources.{name}", 1)
            by_resource[name] = weight if weight >= 0 else 1
    for name, key in (("cpu", "binpack.cpu"), ("memory", "binpack.memory")):
        weight = _int(arguments, key, 1)
        by_resource[name] = weight if weight >= 0 else 1
    return _int(arguments, "binpack.weight", 1), by_resource


def scores(task: job_info.TaskInfo, matrix: node_matrix.NodeMatrix, plugin_weight: int, by_resource: Mapping[str, int]) -> np.ndarray:
    """Every node's score: the weighted mean of how full each requested resource would be with the
    task, 0..100 times the plugin's weight; 0 on a node where something would overflow."""
    total = np.zeros(len(matrix))
    overflow = np.zeros(len(matrix), dtype=bool)
    weight_sum = 0
    for name in task.resreq.names():
        request = task.resreq.get(name)
        weight = by_resource.get(name)
        if request <= 0 or weight is None:
            continue
        weight_sum += weight
        j = matrix.column.get(name)
        if j is None or weight <= 0:
            continue
        capacity = matrix.allocatable[:, j]
        used = matrix.used[:, j] + request
        counted = capacity > 0
        overflow |= counted & (used > capacity)
        total += np.where(counted, used * weight / np.where(counted, capacity, 1), 0.0)
    if weight_sum > 0:
        total /= weight_sum
    return np.where(overflow, 0.0, total * MAX_NODE_SCORE * plugin_weight)


class Binpack:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.plugin_weight, self.by_resource = weights(arguments)

    def on_session_open(self, ssn: Session) -> None:
        if self.plugin_weight != 0:
            ssn.add_batch_node_order_fn(NAME, lambda task: scores(task, ssn.matrix, self.plugin_weight, self.by_resource))

    def on_session_close(self, ssn: Session) -> None:
        return None
