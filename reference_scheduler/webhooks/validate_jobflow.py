"""Volcano's JobFlow rule: the flows' dependsOn targets form a directed acyclic graph of flows
that exist.

Upstream: pkg/webhooks/admission/jobflows/validate/validate_jobflow.go (validateJobFlowDAG) and
util.go (LoadVertexs, IsDAG), in its words.
"""

from __future__ import annotations

from typing import Any, Mapping

NOT_DAG = "jobflow Flow is not DAG"
NOT_DEFINED = "vertex is not defined"


def _has_cycle(name: str, graph: Mapping[str, list[str]], on_path: set[str]) -> bool:
    for target in graph[name]:
        if target in on_path:
            return True
        on_path.add(target)
        if _has_cycle(target, graph, on_path):
            return True
        on_path.discard(target)
    return False


def validate(jobflow: Mapping[str, Any]) -> str:
    """The refusal message ("" when admitted): a target naming no flow, or a cycle."""
    graph: dict[str, list[str]] = {}
    for flow in (jobflow.get("spec") or {}).get("flows") or []:
        graph[str(flow.get("name", ""))] = [str(t) for t in ((flow.get("dependsOn") or {}).get("targets") or [])]
    for targets in graph.values():
        for target in targets:
            if target not in graph:
                return f"{NOT_DAG}: {NOT_DEFINED}: {target}"
    for name in graph:
        if _has_cycle(name, graph, {name}):
            return NOT_DAG
    return ""
