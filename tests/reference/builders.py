"""The objects the reference's tests build their cases from, as the API server returns them: the
scheduler's in-memory snapshots (Nodes, pods, PodGroups, Queues, PodDisruptionBudgets,
HyperNodes), JobFlows and the Jobs they make, and the watch-fed stores the controllers read
(filled by hand). Every module that needs one of these imports it from here, so a case reads as
the cluster it describes; a module keeps to itself only what no other needs (a plugin's own
annotations, a device profile's nodes)."""

from __future__ import annotations

import copy
import datetime
import threading
from typing import Any

from reference_scheduler.controllers import podgroup as podgroup_controller
from reference_scheduler.controllers.jobflow import flow
from reference_scheduler.kube import informer
from reference_scheduler.scheduler.api import hyper_node_info, job_info

HOSTNAME = "kubernetes.io/hostname"
# Taken once, when the module is imported: the pods of `running_since` were scheduled some seconds
# before it. A test may run many minutes later in a long session, so a pod meant to be still
# cooling has a cooldown of a day, never one a slow session could outlast.
NOW = datetime.datetime.now(datetime.timezone.utc)


# --- nodes ---------------------------------------------------------------------------------------
def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None, pods: str = "110", **extra: str) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "16Gi", "pods": pods, **extra}
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}, "status": {"allocatable": allocatable}}


def host(name: str, cpu: str = "4", **labels: str) -> dict[str, Any]:
    """A node labelled with its own hostname (the topology key of per-node affinity rules)."""
    return node(name, cpu=cpu, labels={HOSTNAME: name, **labels})


# --- PodGroups and Queues ------------------------------------------------------------------------
def podgroup(name: str, min_member: int, phase: str = "Inqueue", min_cpu: str | None = None, queue: str = "default", priority: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": min_member, "queue": queue}
    if priority:
        spec["priorityClassName"] = priority
    if min_cpu:
        spec["minResources"] = {"cpu": min_cpu}
    return {"metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec, "status": {"phase": phase}}


def topology_podgroup(name: str, min_member: int, mode: str, highest: int | None = None, annotation: str = "") -> dict[str, Any]:
    """A PodGroup with a network topology (hard or soft) and, where given, the HyperNode a cycle
    recorded on it."""
    out = podgroup(name, min_member)
    out["spec"]["networkTopology"] = {"mode": mode} if highest is None else {"mode": mode, "highestTierAllowed": highest}
    if annotation:
        out["metadata"]["annotations"] = {hyper_node_info.ALLOCATED_HYPERNODE: annotation}
    return out


def queue(name: str = "default", weight: int = 1, capability: dict[str, str] | None = None, state: str = "Open", deserved: dict[str, str] | None = None,
          guarantee: dict[str, str] | None = None, parent: str = "", created: str = "2026-01-01T00:00:00Z", allocated: dict[str, str] | None = None) -> dict[str, Any]:
    """A Queue; `parent` places it in the tree of spec.parent, `allocated` is the status.allocated
    the scheduler wrote on it last."""
    spec: dict[str, Any] = {"weight": weight}
    if capability:
        spec["capability"] = capability
    if deserved:
        spec["deserved"] = deserved
    if guarantee:
        spec["guarantee"] = {"resource": guarantee}
    if parent:
        spec["parent"] = parent
    status: dict[str, Any] = {"state": state}
    if allocated is not None:
        status["allocated"] = allocated
    return {"metadata": {"name": name, "creationTimestamp": created}, "spec": spec, "status": status}


# --- pods ----------------------------------------------------------------------------------------
def pod(name: str, group: str, cpu: str = "1", node_name: str = "", phase: str = "Pending", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "annotations": {job_info.GROUP_NAME_ANNOTATION: group}, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"schedulerName": "volcano", "nodeName": node_name, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec},
        "status": {"phase": phase},
    }


def running(name: str, group: str, node_name: str = "n0", cpu: str = "1", **spec: Any) -> dict[str, Any]:
    return pod(name, group, cpu, node_name=node_name, phase="Running", **spec)


def stamp(seconds_ago: float) -> str:
    return (NOW - datetime.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def running_since(name: str, group: str, node_name: str, cpu: str = "1", labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None, scheduled_ago: float = 3600) -> dict[str, Any]:
    """A running pod whose PodScheduled condition says when it was placed (what cooldowns and
    eviction windows count from)."""
    out = pod(name, group, cpu, node_name=node_name, phase="Running")
    out["metadata"]["labels"] = dict(labels or {})
    out["metadata"]["annotations"].update(annotations or {})
    out["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp(scheduled_ago)}]
    return out


def task_pod(name: str, group: str, role: str, cpu: str = "1") -> dict[str, Any]:
    """A pod of the job's task `role` (volcano.sh/task-spec, as the job controller names it)."""
    out = pod(name, group, cpu)
    out["metadata"]["annotations"][job_info.TASK_SPEC_KEY] = role
    return out


def sized(name: str, group: str, cpu: str, memory: str, **kwargs: Any) -> dict[str, Any]:
    """A pod asking for CPU and memory."""
    made = pod(name, group, cpu, **kwargs)
    made["spec"]["containers"][0]["resources"]["requests"]["memory"] = memory
    return made


def gated(p: dict[str, Any]) -> dict[str, Any]:
    """A copy of a pod held back by a scheduling gate."""
    out = copy.deepcopy(p)
    out["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    return out


def with_meta(p: dict[str, Any], labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A copy of an object with these labels and annotations added to its own."""
    out = copy.deepcopy(p)
    if labels:
        out["metadata"].setdefault("labels", {}).update(labels)
    if annotations:
        out["metadata"].setdefault("annotations", {}).update(annotations)
    return out


# --- PodDisruptionBudgets ------------------------------------------------------------------------
def budget(name: str, app: str, allowed: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": {"selector": {"matchLabels": {"app": app}}}, "status": {"disruptionsAllowed": allowed}}


# --- HyperNodes ----------------------------------------------------------------------------------
def hypernode(name: str, tier: int, members: list[str], member_type: str = "Node") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"tier": tier, "members": [{"type": member_type, "selector": {"exactMatch": {"name": m}}} for m in members]}}


def selector_hypernode(name: str, tier: int, selector: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"tier": tier, "members": [{"type": "Node", "selector": selector}]}}


def tree(racks: dict[str, list[str]], spines: dict[str, list[str]] | None = None, root: str = "") -> list[dict[str, Any]]:
    """Tier-1 racks of nodes, tier-2 spines of racks, a tier-3 root over the spines."""
    out = [hypernode(name, 1, nodes) for name, nodes in racks.items()]
    out += [hypernode(name, 2, members, "HyperNode") for name, members in (spines or {}).items()]
    if root:
        out.append(hypernode(root, 3, list(spines or {}), "HyperNode"))
    return out


# --- JobFlows and the Jobs they make -------------------------------------------------------------
def flows(*pairs: tuple[str, list[str]]) -> dict[str, Any]:
    """A JobFlow of these (flow name, dependsOn targets)."""
    return {"spec": {"flows": [{"name": n, **({"dependsOn": {"targets": t}} if t else {})} for n, t in pairs]}}


def flow_job(flow_name: str, phase: str) -> dict[str, Any]:
    """The Job JobFlow `ns/f` made from its flow `flow_name`, in this phase."""
    return {"metadata": {"name": f"f-{flow_name}", "namespace": "ns", "creationTimestamp": "2026-01-07T10:00:00Z", "labels": {flow.CREATED_BY_FLOW: "ns.f", flow.CREATED_BY_TEMPLATE: f"ns.{flow_name}"}}, "status": {"state": {"phase": phase}}}


# --- watch-fed stores ----------------------------------------------------------------------------
def store(name: str, *items: dict[str, Any]) -> informer.Store:
    """A store never started (no watch): filled with these items as ADDED events, then by the test
    and by the code's own writes (`put`, `forget`)."""
    made = informer.Store(name, lambda **_: None, threading.Event())
    for item in items:
        made._apply("ADDED", item)
    return made


def watched_pod(name: str, version: int, group: str = "") -> dict[str, Any]:
    """A pod as a watch delivers it (with its resourceVersion), in PodGroup `group` if one is given."""
    annotations = {podgroup_controller.GROUP_NAME: group} if group else {}
    return {
        "metadata": {"namespace": "ns", "name": name, "uid": f"uid-{name}", "resourceVersion": str(version), "annotations": annotations},
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Pending"},
    }
