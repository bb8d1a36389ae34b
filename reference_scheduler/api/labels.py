"""Kubernetes label selectors (metav1.LabelSelector and node selector requirements), shared by
the predicates and nodeorder plugins and by HyperNode members chosen by labels.

Upstream: k8s.io/apimachinery pkg/labels (selector semantics), as Volcano's plugins call it.
"""

from __future__ import annotations

from typing import Any, Mapping


def match_expression(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    # A requirement without a key matches as one naming no label would (no node has the label "").
    key, op, values = str(expr.get("key") or ""), expr.get("operator"), expr.get("values") or []
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


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector: nil selects nothing, {} selects everything."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    return all(match_expression(e, labels) for e in selector.get("matchExpressions") or [])
