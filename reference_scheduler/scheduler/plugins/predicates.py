"""predicates: node filters a kubelet-independent scheduler must apply (the resource fit itself is
checked by the allocate action): pod count, unschedulable nodes, nodeSelector, required node
affinity, taints and tolerations.

Upstream: pkg/scheduler/plugins/predicates/predicates.go (which wraps kube-scheduler's filters).
"""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info, node_info
from reference_scheduler.scheduler.framework.session import Session

NAME = "predicates"


def _match_expression(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and values:
        try:
            return int(labels[key]) > int(values[0]) if op == "Gt" else int(labels[key]) < int(values[0])
        except ValueError:
            return False
    return False


def node_affinity_ok(pod: Mapping[str, Any], node: node_info.NodeInfo) -> bool:
    spec = pod.get("spec") or {}
    labels = node.labels
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if terms:
        return any(all(_match_expression(e, labels) for e in term.get("matchExpressions") or []) for term in terms)
    return True


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated_taint(pod: Mapping[str, Any], node: node_info.NodeInfo) -> Mapping[str, Any] | None:
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    for taint in node.taints:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return taint
    return None


class Predicates:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        def predicate(task: job_info.TaskInfo, node: node_info.NodeInfo) -> str | None:
            if node.unschedulable:
                return "node(s) were unschedulable"
            if node.pod_count + 1 > node.max_pods:
                return "Too many pods"
            if not node_affinity_ok(task.pod, node):
                return "node(s) didn't match Pod's node affinity/selector"
            taint = untolerated_taint(task.pod, node)
            if taint is not None:
                return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
            return None

        ssn.add("predicate", NAME, predicate)

    def on_session_close(self, ssn: Session) -> None:
        return None
