"""nodegroup: a queue's `spec.affinity` confines its jobs to groups of nodes, named by the node
label `volcano.sh/nodegroup-name`.

The queue's affinity has `nodeGroupAffinity` and `nodeGroupAntiAffinity`, each with
`requiredDuringSchedulingIgnoredDuringExecution` and `preferredDuringSchedulingIgnoredDuringExecution`
lists of group names.

- Predicate: a node of group G is allowed when G is in either affinity list, unless G is in the
  required anti-affinity list; a group in the preferred anti-affinity list is allowed whatever
  else is said. A node without the label is refused, except with the argument `strict: false`
  for a queue that has no affinity at all; a labelled node is refused to a queue with no affinity.
- Score: 100 for a group in the required affinity list, 50 more in the preferred one; -1 for a
  group in the preferred anti-affinity list (whatever else it scored). Unlabelled nodes score 0.
- With `enableHierarchy: true` a queue without `spec.affinity` takes the nearest ancestor's (by
  `spec.parent`, `root` when none).

Upstream: pkg/scheduler/plugins/nodegroup/nodegroup.go, errors.go;
docs/user-guide/how_to_use_nodegroup_plugin.md.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info, queue_info
from reference_scheduler.scheduler.framework import extension_points
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAME = "nodegroup"
GROUP_LABEL = "volcano.sh/nodegroup-name"
ROOT_QUEUE = "root"
BASE_SCORE = 100.0
# Volcano's reasons, as the PodGroup's condition and the pods' events show them.
AFFINITY_NOT_FOUND = "node group affinity not specified"
LABEL_NOT_FOUND = "node group label not found"
UNSATISFIED = "node does not satisfy the node group affinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


@dataclasses.dataclass(frozen=True)
class GroupAffinity:
    required: frozenset[str]
    preferred: frozenset[str]
    anti_required: frozenset[str]
    anti_preferred: frozenset[str]

    @classmethod
    def of(cls, queue: queue_info.QueueInfo) -> GroupAffinity | None:
        """The queue's own affinity, None when its spec has none."""
        affinity = (queue.queue.get("spec") or {}).get("affinity")
        if affinity is None:
            return None
        near = (affinity or {}).get("nodeGroupAffinity") or {}
        far = (affinity or {}).get("nodeGroupAntiAffinity") or {}
        return cls(frozenset(near.get(REQUIRED) or ()), frozenset(near.get(PREFERRED) or ()), frozenset(far.get(REQUIRED) or ()), frozenset(far.get(PREFERRED) or ()))

    def empty(self) -> bool:
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)

    def allows(self, group: str) -> bool:
        """Anti-affinity wins over affinity; a preferred anti-affinity still allows the group.
        Upstream: queueGroupAffinity.predicate."""
        allowed = group in self.required or group in self.preferred
        if group in self.anti_required:
            allowed = False
        if group in self.anti_preferred:
            allowed = True
        return allowed

    def score(self, group: str) -> float:
        """Upstream: queueGroupAffinity.score."""
        score = 0.0
        if group in self.required:
            score += BASE_SCORE
        if group in self.preferred:
            score += 0.5 * BASE_SCORE
        if group in self.anti_preferred:
            score = -1.0
        return score


def affinities(queues: Mapping[str, queue_info.QueueInfo], hierarchy: bool) -> dict[str, GroupAffinity | None]:
    """Each queue's affinity, inherited from the nearest ancestor that has one when hierarchy is
    on. Upstream: initQueueAttrs, buildAncestors, updateAffinityFromAncestor."""
    own = {name: GroupAffinity.of(queue) for name, queue in queues.items()}
    if not hierarchy:
        return own
    found: dict[str, GroupAffinity | None] = {}
    for name in queues:
        seen = {name}
        current, affinity = name, own[name]
        while affinity is None and current != ROOT_QUEUE:
            parent = queues[current].parent or ROOT_QUEUE
            if parent not in queues or parent in seen:
                log.warning("nodegroup: queue %s has no usable ancestor past %s; it inherits no affinity", name, current)
                break
            seen.add(parent)
            current, affinity = parent, own[parent]
        found[name] = affinity
    return found


class NodeGroup:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        strict = arguments.get("strict", True)
        self.strict = strict if isinstance(strict, bool) else True
        self.by_queue: dict[str, GroupAffinity | None] = {}
        self.groups: list[str | None] = []

    def on_session_open(self, ssn: Session) -> None:
        self.by_queue = affinities(ssn.queues, ssn.hierarchy_enabled(NAME))
        self.groups = [node.labels.get(GROUP_LABEL) for node in ssn.node_list()]
        ssn.add_batch_predicate_fn(NAME, lambda task: self.predicate(ssn, task))
        ssn.add_batch_node_order_fn(NAME, lambda task: self.scores(ssn, task))

    def _affinity(self, ssn: Session, task: job_info.TaskInfo) -> GroupAffinity | None:
        return self.by_queue.get(ssn.jobs[task.job].queue)

    def predicate(self, ssn: Session, task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
        """Upstream: the plugin's predicateFn (every refusal UnschedulableAndUnresolvable)."""
        affinity = self._affinity(ssn, task)
        unset = affinity is None or affinity.empty()
        reasons = np.full(len(self.groups), None, dtype=object)
        for i, group in enumerate(self.groups):
            if group is None:
                if self.strict or not unset:
                    reasons[i] = LABEL_NOT_FOUND
            elif affinity is None or unset:
                reasons[i] = AFFINITY_NOT_FOUND
            elif not affinity.allows(group):
                reasons[i] = UNSATISFIED
        failed = np.fromiter((r is not None for r in reasons), dtype=bool, count=len(reasons))
        return [(failed, reasons)] if failed.any() else []

    def scores(self, ssn: Session, task: job_info.TaskInfo) -> np.ndarray:
        """Upstream: the plugin's nodeOrderFn."""
        affinity = self._affinity(ssn, task)
        if affinity is None:
            return np.zeros(len(self.groups))
        return np.array([affinity.score(group) if group is not None else 0.0 for group in self.groups])

    def on_session_close(self, ssn: Session) -> None:
        return None
