"""binpack: score a node by how full it would be with the task, weighted per resource, so pods
pack onto fewer nodes. Arguments: binpack.weight (0 turns scoring off), binpack.cpu,
binpack.memory, binpack.resources (a comma list) with binpack.resources.<name> weights.

Upstream: pkg/scheduler/plugins/binpack/binpack.go.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info, node_info
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


def score(task: job_info.TaskInfo, node: node_info.NodeInfo, plugin_weight: int, by_resource: Mapping[str, int]) -> float:
    total = 0.0
    weight_sum = 0
    for name in task.resreq.names():
        request = task.resreq.get(name)
        weight = by_resource.get(name)
        if request <= 0 or weight is None:
            continue
        capacity = node.allocatable.get(name)
        used = node.used.get(name) + request
        if capacity > 0 and weight > 0:
            if used > capacity:
                return 0.0
            total += used * weight / capacity
        weight_sum += weight
    if weight_sum > 0:
        total /= weight_sum
    return total * MAX_NODE_SCORE * plugin_weight


class Binpack:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.plugin_weight, self.by_resource = weights(arguments)

    def on_session_open(self, ssn: Session) -> None:
        if self.plugin_weight != 0:
            ssn.add("nodeOrder", NAME, lambda task, node: score(task, node, self.plugin_weight, self.by_resource))

    def on_session_close(self, ssn: Session) -> None:
        return None
