"""kube-scheduler's PodTopologySpread filter, which Volcano's predicates plugin calls: a pod's
`topologySpreadConstraints` with `whenUnsatisfiable: DoNotSchedule` keep the number of matching
pods per topology domain within maxSkew of the least loaded domain.

For each such constraint, the pods counted are those of the pod's namespace that the constraint's
labelSelector (with the pod's own values of `matchLabelKeys`) selects and that are not being
deleted, on the nodes eligible to count: nodes carrying every constraint's topology key and, by
default (`nodeAffinityPolicy: Honor`), matching the pod's nodeSelector and required node affinity;
with `nodeTaintsPolicy: Honor` also only nodes whose taints the pod tolerates (the default is
Ignore). A node fails when it lacks a constraint's key (unresolvable by eviction), or when placing
the pod there would make that domain's count, plus one if the pod matches its own selector, more
than maxSkew above the smallest count among the domains (taken as 0 while there are fewer domains
than minDomains).

Upstream: kubernetes pkg/scheduler/framework/plugins/podtopologyspread (filtering.go, common.go),
wrapped by pkg/scheduler/plugins/predicates/predicates.go.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Mapping, Sequence

from reference_scheduler.api.labels import selector_matches
from reference_scheduler.scheduler.api import job_info, node_info
from reference_scheduler.scheduler.plugins import node_fit

SKEW = "node(s) didn't match pod topology spread constraints"
MISSING_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"


@dataclasses.dataclass(frozen=True)
class Constraint:
    key: str
    max_skew: int
    selector: Mapping[str, Any]
    min_domains: int
    honor_affinity: bool
    honor_taints: bool


def hard_constraints(pod: Mapping[str, Any]) -> list[Constraint]:
    """The pod's DoNotSchedule constraints, each selector widened by its matchLabelKeys."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    found = []
    for item in (pod.get("spec") or {}).get("topologySpreadConstraints") or []:
        if item.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
            continue
        selector = dict(item.get("labelSelector") or {})
        extra = [{"key": k, "operator": "In", "values": [labels[k]]} for k in item.get("matchLabelKeys") or [] if k in labels]
        if extra:
            selector["matchExpressions"] = list(selector.get("matchExpressions") or []) + extra
        found.append(Constraint(
            key=item.get("topologyKey", ""),
            max_skew=int(item.get("maxSkew") or 1),
            selector=selector,
            min_domains=int(item.get("minDomains") or 1),
            honor_affinity=(item.get("nodeAffinityPolicy") or "Honor") == "Honor",
            honor_taints=(item.get("nodeTaintsPolicy") or "Ignore") == "Honor",
        ))
    return found


def _counts(task: job_info.TaskInfo, constraints: Sequence[Constraint], nodes: Sequence[node_info.NodeInfo]) -> tuple[list[collections.Counter[str]], list[set[str]]]:
    """Per constraint: matching pods per domain value, and the domains seen on eligible nodes."""
    keys = [c.key for c in constraints]
    tolerations = node_fit.tolerations_of(task.pod)
    counts: list[collections.Counter[str]] = [collections.Counter() for _ in constraints]
    domains: list[set[str]] = [set() for _ in constraints]
    for node in nodes:
        labels = node.labels
        if any(k not in labels for k in keys):
            continue
        for i, constraint in enumerate(constraints):
            if constraint.honor_affinity and not node_fit.node_affinity_ok(task.pod, labels, node.name):
                continue
            if constraint.honor_taints and node_fit.untolerated(tolerations, node.taints, ("NoSchedule", "NoExecute")):
                continue
            value = labels[constraint.key]
            domains[i].add(value)
            for other in node.tasks.values():
                if other.uid == task.uid or other.status is job_info.TaskStatus.RELEASING or other.namespace != task.namespace:
                    continue
                if selector_matches(constraint.selector, (other.pod.get("metadata") or {}).get("labels") or {}):
                    counts[i][value] += 1
    return counts, domains


def failures(task: job_info.TaskInfo, nodes: Sequence[node_info.NodeInfo]) -> list[tuple[str, bool] | None]:
    """Per node: None when the pod may go there, else (reason, resolvable by evicting pods)."""
    constraints = hard_constraints(task.pod)
    if not constraints:
        return [None] * len(nodes)
    counts, domains = _counts(task, constraints, nodes)
    own_labels = (task.pod.get("metadata") or {}).get("labels") or {}
    least = []
    for i, constraint in enumerate(constraints):
        smallest = min((counts[i][d] for d in domains[i]), default=0)
        least.append(0 if len(domains[i]) < constraint.min_domains else smallest)
    out: list[tuple[str, bool] | None] = []
    for node in nodes:
        labels = node.labels
        verdict: tuple[str, bool] | None = None
        for i, constraint in enumerate(constraints):
            if constraint.key not in labels:
                verdict = (MISSING_LABEL, False)
                break
            own = 1 if selector_matches(constraint.selector, own_labels) else 0
            if counts[i][labels[constraint.key]] + own - least[i] > constraint.max_skew:
                verdict = (SKEW, True)
                break
        out.append(verdict)
    return out
