"""The objects of the scheduler's in-memory snapshots, built as the API server returns them
(Nodes, pods, PodGroups, Queues): every table-driven module of tests/reference builds its cases
from these, so a case reads as the cluster it describes."""

from __future__ import annotations

from typing import Any

from reference_scheduler.scheduler.api import job_info


def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None, pods: str = "110", **extra: str) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "16Gi", "pods": pods, **extra}
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}, "status": {"allocatable": allocatable}}


def podgroup(name: str, min_member: int, phase: str = "Inqueue", min_cpu: str | None = None, queue: str = "default", priority: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if priority:
        spec["priorityClassName"] = priority
    if min_cpu:
        spec["minResources"] = {"cpu": min_cpu}
    return {"metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec, "status": {"phase": phase}}


def pod(name: str, group: str, cpu: str = "1", node_name: str = "", phase: str = "Pending", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "annotations": {job_info.GROUP_NAME_ANNOTATION: group}, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"schedulerName": "volcano", "nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
        "status": {"phase": phase},
    }


def queue(name: str = "default", weight: int = 1, capability: dict[str, str] | None = None, state: str = "Open") -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": weight}
    if capability:
        spec["capability"] = capability
    return {"metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec, "status": {"state": state}}
