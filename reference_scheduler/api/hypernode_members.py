"""The nodes a HyperNode's members select, as both the scheduler (the HyperNode tree of a cycle)
and the HyperNode controller (`status.nodeCount`) read them.

Upstream: pkg/scheduler/api/hyper_node_info.go (GetMembers), which Volcano's HyperNode controller
also calls.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Mapping

from reference_scheduler.api import labels as labels_mod

log = logging.getLogger(__name__)
# A member's `type`: a node (chosen by its selector) or a child HyperNode (named by exactMatch).
MEMBER_NODE = "Node"
MEMBER_HYPERNODE = "HyperNode"


def members_of(selector: Mapping[str, Any], nodes: Mapping[str, Mapping[str, str]]) -> set[str]:
    """The nodes (name -> labels) a Node member's selector picks: the union of its exactMatch,
    regexMatch and labelMatch. As upstream: an exactMatch without a name, a pattern that does not
    compile or a labelMatch that is empty select nothing more; a pattern is searched for anywhere in
    the name, as Go's MatchString does (Python's `re` reads the usual RE2 patterns alike).
    Upstream: GetMembers."""
    found: set[str] = set()
    exact = selector.get("exactMatch")
    if exact is not None:
        name = (exact or {}).get("name") or ""
        if not name:
            return found
        found.add(name)
    regex = selector.get("regexMatch")
    if regex is not None:
        pattern = str((regex or {}).get("pattern") or "")
        try:
            compiled = re.compile(pattern)
        except re.error as err:
            log.error("HyperNode member pattern %r does not compile: %s", pattern, err)
            return set()
        found.update(n for n in nodes if compiled.search(n))
    label = selector.get("labelMatch")
    if label is not None:
        label = label or {}
        if not label.get("matchLabels") and not label.get("matchExpressions"):
            return found
        found.update(n for n, labels in nodes.items() if labels_mod.selector_matches(label, labels))
    return found


def child_hypernode(member: Mapping[str, Any]) -> str:
    """A HyperNode member names its child by exactMatch only (upstream ignores the others)."""
    return str(((member.get("selector") or {}).get("exactMatch") or {}).get("name") or "")
