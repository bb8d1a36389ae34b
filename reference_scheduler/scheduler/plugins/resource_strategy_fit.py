"""resource-strategy-fit: node scores per resource, each resource packed (MostAllocated) or spread
(LeastAllocated) with its own weight; the sra score that keeps tasks off nodes holding scarce
resources they do not need; and the proportional predicate that keeps CPU and memory free on a
node in proportion to its idle scarce resources.

Arguments (all optional):

- `resourceStrategyFitWeight` (10; a negative value means 10, 0 switches the score off);
- `resources`: `{NAME: {type: MostAllocated|LeastAllocated, weight: N}}`, default cpu and memory
  LeastAllocated with weight 1. A name may end in one `*` (`nvidia.com/*`), matching every
  resource it prefixes; an exact name wins, then the longest prefix. A bare `*`, or a `*` anywhere
  but at the end, is ignored. A weight of 0 or less means 1, an unknown type LeastAllocated.
- a pod's annotations `volcano.sh/resource-strategy-scoring-type` (the type for all its
  resources) and `volcano.sh/resource-strategy-weight` (a JSON object, resource -> weight) take
  the place of `resources` for that pod; with the first and not the second the pod scores 0.
- `sra: {enable, resources: "a,b", weight, resourceWeight: {NAME: N}}`;
- `proportional: {enable, resources: "a,b", resourceProportion: {"NAME.cpu": C, "NAME.memory": M}}`:
  a task that asks for none of the named resources may use a node only while what stays idle
  there keeps C CPUs and M GB (10^9 bytes) of memory per idle unit of each named resource
  (default 1 and 1; a negative value means 1).

Per node the strategy score is the weighted mean over the task's requested resources of the
fraction used (MostAllocated) or left (LeastAllocated) with the task, times 100 and the plugin's
weight; a node any of those resources would overflow scores 0. A resource that no entry names
does not count.

Upstream: pkg/scheduler/plugins/resource-strategy-fit/ (resource_strategy_fit.go, sra.go,
proportional.go); docs/design/resource-strategy-fit-scheduling.md.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info, node_matrix
from reference_scheduler.scheduler.framework import extension_points
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAME = "resource-strategy-fit"
MAX_NODE_SCORE = 100.0
DEFAULT_WEIGHT = 10
MOST = "MostAllocated"
LEAST = "LeastAllocated"
SCORING_TYPE_ANNOTATION = "volcano.sh/resource-strategy-scoring-type"
WEIGHT_ANNOTATION = "volcano.sh/resource-strategy-weight"
# Scalar resources are counted in thousandths upstream, and a proportion's memory is in GB.
MILLI = 1000.0
GIGA = 1e9


@dataclasses.dataclass(frozen=True)
class Strategy:
    type: str
    weight: int


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _number(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def valid_pattern(name: str) -> bool:
    """A name, or a prefix ending in a single `*` (not `*` alone). Upstream: isValidWildcardPattern."""
    if "*" not in name:
        return True
    return name != "*" and name.endswith("*") and name.count("*") == 1


def strategies(arguments: Mapping[str, Any]) -> tuple[int, dict[str, Strategy]]:
    """(the plugin's weight, the strategy of each resource name or pattern). Upstream: calculateWeight."""
    weight = _int(arguments.get("resourceStrategyFitWeight"), DEFAULT_WEIGHT)
    if weight < 0:
        weight = DEFAULT_WEIGHT
    given = arguments.get("resources")
    if not isinstance(given, Mapping) or not given:
        given = {"cpu": {"type": LEAST, "weight": 1}, "memory": {"type": LEAST, "weight": 1}}
    found: dict[str, Strategy] = {}
    for name, entry in given.items():
        if not valid_pattern(str(name)):
            log.warning("resource-strategy-fit: resource pattern %r ignored: only one trailing * is supported", name)
            continue
        entry = entry if isinstance(entry, Mapping) else {}
        kind = entry.get("type")
        resource_weight = _int(entry.get("weight"), 0)
        found[str(name)] = Strategy(kind if kind in (MOST, LEAST) else LEAST, resource_weight if resource_weight > 0 else 1)
    return weight, found


def lookup(resource: str, configured: Mapping[str, Strategy]) -> Strategy | None:
    """The exact entry, else the wildcard with the longest matching prefix.
    Upstream: findResourceConfigWithPrefix."""
    if resource in configured:
        return configured[resource]
    best, chosen = "", None
    for name, strategy in configured.items():
        prefix = name[:-1] if name.endswith("*") else None
        if prefix is not None and resource.startswith(prefix) and (chosen is None or len(prefix) > len(best)):
            best, chosen = prefix, strategy
    return chosen


def _pod_strategies(task: job_info.TaskInfo) -> dict[str, Strategy] | None:
    """The pod's own strategy from its annotations ({} when they are unusable), or None."""
    annotations = task.pod["metadata"].get("annotations") or {}
    kind = annotations.get(SCORING_TYPE_ANNOTATION, "")
    if not kind:
        return None
    try:
        weights = json.loads(annotations.get(WEIGHT_ANNOTATION, ""))
    except ValueError:
        log.warning("resource-strategy-fit: pod %s/%s has %s without a JSON %s; it scores 0", task.namespace, task.name, SCORING_TYPE_ANNOTATION, WEIGHT_ANNOTATION)
        return {}
    if not isinstance(weights, dict):
        return {}
    return {name: Strategy(kind, _int(w, 0)) for name, w in weights.items()}


def strategy_scores(task: job_info.TaskInfo, matrix: node_matrix.NodeMatrix, plugin_weight: int, configured: Mapping[str, Strategy]) -> np.ndarray:
    """Every node's strategy score for the task. Upstream: Score."""
    own = _pod_strategies(task)
    if own == {}:
        return np.zeros(len(matrix))
    total = np.zeros(len(matrix))
    overflow = np.zeros(len(matrix), dtype=bool)
    weight_sum = 0
    for name in task.resreq.names():
        request = task.resreq.get(name)
        if request <= 0:
            continue
        strategy = own.get(name) if own is not None else lookup(name, configured)
        if strategy is None:
            continue
        weight_sum += strategy.weight
        j = matrix.column.get(name)
        if j is None or strategy.weight == 0:
            continue
        capacity = matrix.allocatable[:, j]
        used = matrix.used[:, j] + request
        counted = capacity > 0
        overflow |= counted & (used > capacity)
        safe = np.where(counted, capacity, 1.0)
        if strategy.type == MOST:
            total += np.where(counted, used * strategy.weight / safe, 0.0)
        elif strategy.type == LEAST:
            total += np.where(counted, (capacity - used) * strategy.weight / safe, 0.0)
    if weight_sum > 0:
        total /= weight_sum
    return np.where(overflow, 0.0, total * MAX_NODE_SCORE * plugin_weight)


@dataclasses.dataclass(frozen=True)
class Sra:
    weight: int
    resources: Mapping[str, int]

    @classmethod
    def parse(cls, arguments: Mapping[str, Any]) -> Sra:
        """Upstream: applySraPolicy, calculateSraWeight."""
        given = arguments.get("sra")
        if not isinstance(given, Mapping) or given.get("enable") is not True:
            return cls(0, {})
        weights = given.get("resourceWeight")
        per_resource: Mapping[str, Any] = weights if isinstance(weights, Mapping) else {}
        resources: dict[str, int] = {}
        for name in str(given.get("resources") or "").split(","):
            name = name.strip()
            if name:
                weight = _int(per_resource.get(name), 1)
                resources[name] = weight if weight >= 0 else 1
        return cls(_int(given.get("weight"), 0), resources)

    def scores(self, task: job_info.TaskInfo, matrix: node_matrix.NodeMatrix) -> np.ndarray:
        """Higher where the node has fewer of the scarce resources; 0 where the node lacks one
        the task asks for. Upstream: sraScore."""
        lacking = np.zeros(len(matrix), dtype=bool)
        for name in task.resreq.names():
            if task.resreq.get(name) <= 0:
                continue
            j = matrix.column.get(name)
            lacking |= np.ones(len(matrix), dtype=bool) if j is None else matrix.allocatable[:, j] == 0
        held = np.zeros(len(matrix))
        for name, weight in self.resources.items():
            j = matrix.column.get(name)
            if j is not None:
                held += np.where(matrix.allocatable[:, j] > 0, weight, 0)
        total = sum(self.resources.values())
        score = 1.0 - held / total if total > 0 else held
        return np.where(lacking, 0.0, score * MAX_NODE_SCORE * self.weight)


def proportions(arguments: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """resource -> (CPUs, GB of memory) to keep idle per idle unit of it; empty when off.
    Upstream: applyProportionalPolicy, calculateProportionalResources."""
    given = arguments.get("proportional")
    if not isinstance(given, Mapping) or given.get("enable") is not True:
        return {}
    proportion = given.get("resourceProportion")
    rates: Mapping[str, Any] = proportion if isinstance(proportion, Mapping) else {}
    found: dict[str, tuple[float, float]] = {}
    for name in str(given.get("resources") or "").split(","):
        name = name.strip()
        if name:
            cpu = _number(rates.get(f"{name}.cpu"), 1.0)
            memory = _number(rates.get(f"{name}.memory"), 1.0)
            found[name] = (cpu if cpu >= 0 else 1.0, memory if memory >= 0 else 1.0)
    return found


def proportional_failures(task: job_info.TaskInfo, matrix: node_matrix.NodeMatrix, rates: Mapping[str, tuple[float, float]]) -> list[extension_points.PredicateCheck]:
    """Nodes where the task would eat into the CPU or memory kept for idle scarce resources; a task
    asking for any of them is never refused. Upstream: checkNodeResourceIsProportional."""
    if any(task.resreq.get(name) > 0 for name in rates):
        return []
    idle = matrix.idle()
    cpu_j, memory_j = matrix.column.get("cpu"), matrix.column.get("memory")
    cpu_left = (idle[:, cpu_j] if cpu_j is not None else np.zeros(len(matrix))) - task.resreq.get("cpu")
    memory_left = (idle[:, memory_j] if memory_j is not None else np.zeros(len(matrix))) - task.resreq.get("memory")
    reasons = np.full(len(matrix), None, dtype=object)
    # Upstream walks its map in no fixed order and reports the first resource that fails; the kit
    # reports the first by name.
    for name in sorted(rates, reverse=True):
        j = matrix.column.get(name)
        if j is None:
            continue
        cpu_rate, memory_rate = rates[name]
        held = matrix.allocatable[:, j] > 0
        units = idle[:, j] * MILLI
        failed = held & ((cpu_left < units * cpu_rate) | (memory_left < units * memory_rate * GIGA / MILLI))
        reasons[failed] = f"proportional of resource {name} check failed"
    failed_any = np.fromiter((r is not None for r in reasons), dtype=bool, count=len(reasons))
    return [(failed_any, reasons)] if failed_any.any() else []


class ResourceStrategyFit:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.weight, self.resources = strategies(arguments)
        self.sra = Sra.parse(arguments)
        self.rates = proportions(arguments)

    def on_session_open(self, ssn: Session) -> None:
        if self.rates:
            ssn.add_batch_predicate_fn(NAME, lambda task: proportional_failures(task, ssn.matrix, self.rates))
        if self.weight > 0 or self.sra.weight > 0:
            ssn.add_batch_node_order_fn(NAME, lambda task: self.scores(task, ssn.matrix))

    def scores(self, task: job_info.TaskInfo, matrix: node_matrix.NodeMatrix) -> np.ndarray:
        total = np.zeros(len(matrix))
        if self.weight > 0:
            total += strategy_scores(task, matrix, self.weight, self.resources)
        if self.sra.weight > 0:
            total += self.sra.scores(task, matrix)
        return total

    def on_session_close(self, ssn: Session) -> None:
        return None
