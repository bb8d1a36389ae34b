"""What of each object a timeline entry keeps: enough for a reader to follow, small enough to store."""

from __future__ import annotations

from typing import Any, Callable, Mapping

Summary = dict[str, Any]


def phase_of(kind: str, obj: Mapping[str, Any]) -> str | None:
    """The phase as Volcano and Kubernetes expose it for each kind."""
    status = obj.get("status") or {}
    if kind == "Job" and obj.get("apiVersion", "").startswith("batch.volcano.sh"):
        return (status.get("state") or {}).get("phase")
    if kind == "JobFlow":
        return (status.get("state") or {}).get("phase")
    if kind == "Queue":
        return status.get("state")
    return status.get("phase")


def _conditions(obj: Mapping[str, Any]) -> list[str]:
    out = []
    for c in (obj.get("status") or {}).get("conditions") or []:
        text = f"{c.get('type')}={c.get('status')}"
        if c.get("reason"):
            text += f"({c['reason']})"
        out.append(text)
    return out


def _pod(obj: Mapping[str, Any]) -> Summary:
    status = obj.get("status") or {}
    summary: Summary = {"phase": status.get("phase"), "node": (obj.get("spec") or {}).get("nodeName")}
    containers = status.get("containerStatuses") or []
    if containers:
        first = containers[0]
        restarts = first.get("restartCount") or 0
        if restarts:
            summary["restarts"] = restarts
        terminated = (first.get("state") or {}).get("terminated")
        if terminated:
            summary["exitCode"] = terminated.get("exitCode")
    if obj["metadata"].get("deletionTimestamp"):
        summary["deleting"] = True
    return summary


def _podgroup(obj: Mapping[str, Any]) -> Summary:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    return {
        "phase": status.get("phase"),
        "minMember": spec.get("minMember"),
        "running": status.get("running"),
        "succeeded": status.get("succeeded"),
        "failed": status.get("failed"),
        "conditions": _conditions(obj),
    }


def _vcjob(obj: Mapping[str, Any]) -> Summary:
    status = obj.get("status") or {}
    state = status.get("state") or {}
    summary: Summary = {"phase": state.get("phase")}
    for key in ("pending", "running", "succeeded", "failed", "terminating", "retryCount", "version"):
        if status.get(key):
            summary[key] = status[key]
    if state.get("reason"):
        summary["reason"] = state["reason"]
    return summary


def _queue(obj: Mapping[str, Any]) -> Summary:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    summary: Summary = {"phase": status.get("state"), "weight": spec.get("weight")}
    for key in ("pending", "running", "inqueue", "completed"):
        if status.get(key):
            summary[key] = status[key]
    return summary


def _event(obj: Mapping[str, Any]) -> Summary:
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    return {
        "reason": obj.get("reason"),
        "type": obj.get("type"),
        "object": f"{involved.get('kind')}/{involved.get('name')}",
        "message": (obj.get("message") or obj.get("note") or "")[:300],
        "count": obj.get("count"),
    }


def _node(obj: Mapping[str, Any]) -> Summary:
    spec = obj.get("spec") or {}
    summary: Summary = {"unschedulable": bool(spec.get("unschedulable"))}
    if spec.get("taints"):
        summary["taints"] = [f"{t.get('key')}:{t.get('effect')}" for t in spec["taints"]]
    return summary


def _hypernode(obj: Mapping[str, Any]) -> Summary:
    spec = obj.get("spec") or {}
    members = []
    for member in spec.get("members") or []:
        selector = member.get("selector") or {}
        how = next(iter(selector), "?")
        value = selector.get(how) or {}
        shown = value.get("name") or value.get("pattern") or value.get("matchLabels") or value
        members.append(f"{member.get('type')}:{shown}")
    return {"tier": spec.get("tier"), "members": members, "nodeCount": (obj.get("status") or {}).get("nodeCount")}


def _numatopology(obj: Mapping[str, Any]) -> Summary:
    spec = obj.get("spec") or {}
    cpu = (spec.get("numares") or {}).get("cpu") or {}
    return {"policies": spec.get("policies"), "cpu": cpu}


def _cronjob(obj: Mapping[str, Any]) -> Summary:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {
        "suspend": spec.get("suspend"),
        "active": [ref.get("name") for ref in status.get("active") or []],
        "lastScheduleTime": status.get("lastScheduleTime"),
        "lastSuccessfulTime": status.get("lastSuccessfulTime"),
    }


def _jobflow(obj: Mapping[str, Any]) -> Summary:
    status = obj.get("status") or {}
    summary: Summary = {"phase": (status.get("state") or {}).get("phase")}
    for key in ("pendingJobs", "runningJobs", "completedJobs", "failedJobs", "terminatedJobs"):
        if status.get(key):
            summary[key] = status[key]
    return summary


def _jobtemplate(obj: Mapping[str, Any]) -> Summary:
    return {"jobDependsOnList": (obj.get("status") or {}).get("jobDependsOnList")}


def _generic(obj: Mapping[str, Any]) -> Summary:
    phase = (obj.get("status") or {}).get("phase")
    return {"phase": phase} if phase else {}


_BY_KIND: dict[str, Callable[[Mapping[str, Any]], Summary]] = {
    "Pod": _pod,
    "PodGroup": _podgroup,
    "Queue": _queue,
    "Event": _event,
    "Node": _node,
    "HyperNode": _hypernode,
    "Numatopology": _numatopology,
    "CronJob": _cronjob,
    "JobFlow": _jobflow,
    "JobTemplate": _jobtemplate,
}


def summarize(kind: str, obj: Mapping[str, Any]) -> Summary:
    if kind == "Job" and str(obj.get("apiVersion", "")).startswith("batch.volcano.sh"):
        return _vcjob(obj)
    return _BY_KIND.get(kind, _generic)(obj)
