"""Which nodes a HyperNode holds, read from the observed HyperNode objects, so a scenario can
select pods by the HyperNode they were placed under (`select: {hypernode: NAME}`).

A HyperNode's members are Nodes (tier 1) or other HyperNodes, each chosen by one selector:
`exactMatch` (a name), `regexMatch` (a pattern searched in the name) or `labelMatch` (a label
selector). The nodes under a HyperNode are its Node members and, at any depth, those of its
HyperNode members. Upstream: the HyperNode API (volcano.sh/apis pkg/apis/topology/v1alpha1) and
pkg/scheduler/api/hyper_node_info.go, read for the meaning; written here for the kit, which never
imports the reference.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

MEMBER_NODE = "Node"
MEMBER_HYPERNODE = "HyperNode"


def _expression_holds(labels: Mapping[str, Any], expr: Mapping[str, Any]) -> bool:
    key, operator, values = str(expr.get("key")), expr.get("operator"), list(expr.get("values") or [])
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False


def _label_selector_holds(labels: Mapping[str, Any], selector: Mapping[str, Any]) -> bool:
    """A Kubernetes label selector; an empty one selects nothing here, as in a HyperNode member."""
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return False
    return all(labels.get(k) == v for k, v in match_labels.items()) and all(_expression_holds(labels, e) for e in expressions)


def selected(selector: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
    """Whether a member selector picks this Node or HyperNode."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    exact = selector.get("exactMatch")
    if isinstance(exact, Mapping) and exact.get("name"):
        return bool(exact["name"] == name)
    regex = selector.get("regexMatch")
    if isinstance(regex, Mapping) and regex.get("pattern"):
        try:
            return re.search(str(regex["pattern"]), name) is not None
        except re.error:
            return False
    label = selector.get("labelMatch")
    if isinstance(label, Mapping):
        return _label_selector_holds(meta.get("labels") or {}, label)
    return False


def nodes_under(hypernodes: Iterable[Mapping[str, Any]], nodes: Iterable[Mapping[str, Any]], name: str) -> set[str]:
    """The names of the nodes under the HyperNode `name` (none when it does not exist)."""
    by_name = {str((h.get("metadata") or {}).get("name")): h for h in hypernodes}
    node_list = list(nodes)
    out: set[str] = set()
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen or current not in by_name:
            continue
        seen.add(current)
        for member in (by_name[current].get("spec") or {}).get("members") or []:
            selector = member.get("selector") or {}
            if member.get("type", MEMBER_NODE) == MEMBER_HYPERNODE:
                pending += [child for child, obj in by_name.items() if selected(selector, obj)]
            else:
                out |= {str(n["metadata"]["name"]) for n in node_list if selected(selector, n)}
    return out
