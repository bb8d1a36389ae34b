"""kube-scheduler's per-pod rules that the predicates and nodeorder plugins share: label
selectors, node affinity, taints and tolerations, inter-pod affinity, host ports. Volcano calls
kube-scheduler's own plugins for these; the kit states the same rules in its own words.

Upstream: pkg/scheduler/plugins/predicates/predicates.go and nodeorder/nodeorder.go, which wrap
kubernetes pkg/scheduler/framework/plugins/{nodeaffinity,tainttoleration,interpodaffinity,nodeports}.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from reference_scheduler.api.labels import match_expression, selector_matches
from reference_scheduler.scheduler.api import job_info, node_info


def node_selector_term_matches(term: Mapping[str, Any], labels: Mapping[str, str], name: str = "") -> bool:
    expressions = term.get("matchExpressions") or []
    # matchFields may only name metadata.name (how DaemonSets pin a pod to a node).
    fields = term.get("matchFields") or []
    # A term with neither selects nothing, as in kube-scheduler.
    return bool(expressions or fields) and all(match_expression(e, labels) for e in expressions) and all(match_expression(f, {"metadata.name": name}) for f in fields)


def node_affinity_ok(pod: Mapping[str, Any], labels: Mapping[str, str], name: str = "") -> bool:
    """nodeSelector and the required node affinity terms (any term may match)."""
    spec = pod.get("spec") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if terms:
        return any(node_selector_term_matches(term, labels, name) for term in terms)
    return True


def preferred_node_affinity(pod: Mapping[str, Any], labels: Mapping[str, str], name: str = "") -> int:
    """The sum of the weights of the preferred node affinity terms the node matches."""
    spec = pod.get("spec") or {}
    preferred = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or []
    return sum(int(p.get("weight") or 0) for p in preferred if node_selector_term_matches(p.get("preference") or {}, labels, name))


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return toleration.get("key") == taint.get("key") and (toleration.get("value") or "") == (taint.get("value") or "")


def untolerated(tolerations: list[Mapping[str, Any]], taints: Iterable[Mapping[str, Any]], effects: tuple[str, ...]) -> list[Mapping[str, Any]]:
    return [t for t in taints if t.get("effect") in effects and not any(tolerates(x, t) for x in tolerations)]


def tolerations_of(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((pod.get("spec") or {}).get("tolerations") or [])


# --- label selectors and inter-pod affinity ------------------------------------------------------

def term_matches_pod(term: Mapping[str, Any], owner_namespace: str, pod: Mapping[str, Any]) -> bool:
    """Does an affinity term written in a pod of `owner_namespace` select `pod`? Namespaces: the
    term's list, else all when namespaceSelector is {} (a non-empty namespaceSelector would need
    namespace labels, which the reference does not watch: it is treated as the owner's namespace)."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace", "")
    namespaces = term.get("namespaces") or []
    if namespaces:
        if namespace not in namespaces:
            return False
    elif term.get("namespaceSelector") != {} and namespace != owner_namespace:
        return False
    return selector_matches(term.get("labelSelector"), meta.get("labels") or {})


def required_terms(pod: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    """kind: podAffinity or podAntiAffinity."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get(kind) or {}
    return list(affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def preferred_terms(pod: Mapping[str, Any], kind: str) -> list[Mapping[str, Any]]:
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get(kind) or {}
    return list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or [])


def has_pod_affinity(pod: Mapping[str, Any]) -> bool:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    return bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))


def placed_pods(nodes: Iterable[node_info.NodeInfo]) -> Iterable[tuple[node_info.NodeInfo, job_info.TaskInfo]]:
    for node in nodes:
        for task in node.tasks.values():
            yield node, task


def host_ports(pod: Mapping[str, Any]) -> set[tuple[str, str, int]]:
    """(protocol, hostIP, hostPort) of every container port with a hostPort."""
    found = set()
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                found.add((port.get("protocol") or "TCP", port.get("hostIP") or "0.0.0.0", int(port["hostPort"])))
    return found


def ports_conflict(wanted: set[tuple[str, str, int]], used: set[tuple[str, str, int]]) -> bool:
    """Same protocol and port, and the same host IP or either side on every address."""
    for protocol, ip, port in wanted:
        for used_protocol, used_ip, used_port in used:
            if protocol == used_protocol and port == used_port and (ip == used_ip or "0.0.0.0" in (ip, used_ip)):
                return True
    return False
