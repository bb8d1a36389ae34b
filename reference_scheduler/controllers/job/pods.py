"""The pods a Job's tasks make: names, labels and annotations as Volcano's controller sets them.

Upstream: pkg/controllers/job/job_controller_util.go (createJobPod).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from reference_scheduler.controllers import quota

GROUP_NAME = "scheduling.k8s.io/group-name"
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
TASK_SPEC = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
RETRY_COUNT = "volcano.sh/job-retry-count"
TEMPLATE_KEY = "volcano.sh/template-uid"
# v1.14: which partition of its task a pod is in (index // partitionSize).
PARTITION_ID = "volcano.sh/partition-id"
# What the scheduler reads on a pod and a user writes on the Job: the controller copies these of
# the Job's annotations to each pod (the JDB ones: min-available, else max-unavailable), and these
# of its labels. Upstream: createJobPod in job_controller_util.go.
PREEMPTABLE = "volcano.sh/preemptable"
COOLDOWN_TIME = "volcano.sh/cooldown-time"
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
COPIED_ANNOTATIONS = (PREEMPTABLE, COOLDOWN_TIME, REVOCABLE_ZONE)
COPIED_LABELS = (PREEMPTABLE, COOLDOWN_TIME)


def podgroup_name(job: dict[str, Any]) -> str:
    return f"{job['metadata']['name']}-{job['metadata']['uid']}"


def pod_name(job: str, task: str, index: int) -> str:
    return f"{job}-{task}-{index}"


def owner(job: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job["metadata"]["name"], "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def make_pod(job: dict[str, Any], task: dict[str, Any], index: int, version: int, retry_count: int) -> dict[str, Any]:
    meta = job["metadata"]
    spec = job["spec"]
    template = copy.deepcopy(task.get("template") or {})
    pod_meta = template.get("metadata") or {}
    pod_spec = template.get("spec") or {}
    if not pod_spec.get("schedulerName"):
        pod_spec["schedulerName"] = spec["schedulerName"]
    if not pod_spec.get("priorityClassName") and spec.get("priorityClassName"):
        pod_spec["priorityClassName"] = spec["priorityClassName"]
    _quantities_as_strings(pod_spec)
    if task.get("topologyPolicy"):
        pod_meta.setdefault("annotations", {})["volcano.sh/numa-topology-policy"] = task["topologyPolicy"]
    annotations = dict(pod_meta.get("annotations") or {})
    annotations.update({
        TASK_INDEX: str(index),
        TASK_SPEC: task["name"],
        GROUP_NAME: podgroup_name(job),
        JOB_NAME: meta["name"],
        QUEUE_NAME: spec["queue"],
        JOB_VERSION: str(version),
        TEMPLATE_KEY: f"{meta['name']}-{task['name']}",
        RETRY_COUNT: str(retry_count),
    })
    annotations.update(_copied_annotations(meta.get("annotations") or {}))
    labels = dict(pod_meta.get("labels") or {})
    labels.update({TASK_INDEX: str(index), JOB_NAME: meta["name"], TASK_SPEC: task["name"], JOB_NAMESPACE: meta["namespace"], QUEUE_NAME: spec["queue"]})
    job_labels = meta.get("labels") or {}
    labels.update({key: job_labels[key] for key in COPIED_LABELS if key in job_labels})
    partitions = task.get("partitionPolicy")
    if partitions:
        size = int(partitions.get("partitionSize") or 0)
        labels[PARTITION_ID] = str(index // size if size > 0 else 0)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name(meta["name"], task["name"], index), "namespace": meta["namespace"], "labels": labels, "annotations": annotations, "ownerReferences": [owner(job)]},
        "spec": pod_spec,
    }


def _copied_annotations(job_annotations: dict[str, Any]) -> dict[str, str]:
    out = {key: str(job_annotations[key]) for key in COPIED_ANNOTATIONS if key in job_annotations}
    for key in (JDB_MIN_AVAILABLE, JDB_MAX_UNAVAILABLE):
        if key in job_annotations:
            out[key] = str(job_annotations[key])
            break
    return out


def sub_group_policy(job: dict[str, Any]) -> list[dict[str, Any]]:
    """The PodGroup's subGroupPolicy: one entry per task with a partitionPolicy, in task order;
    each partition is the pods of the task with one partition-id. Upstream: buildSubGroupPolicy
    in job_controller_actions.go."""
    out: list[dict[str, Any]] = []
    for task in job["spec"].get("tasks") or []:
        partitions = task.get("partitionPolicy")
        if not partitions:
            continue
        entry: dict[str, Any] = {
            "name": task["name"],
            "subGroupSize": int(partitions.get("partitionSize") or 0),
            "minSubGroups": int(partitions.get("minPartitions") or 0),
            "labelSelector": {"matchLabels": {TASK_SPEC: task["name"]}},
            "matchLabelKeys": [PARTITION_ID],
        }
        topology = partitions.get("networkTopology")
        if topology:
            entry["networkTopology"] = {k: topology[k] for k in ("mode", "highestTierAllowed", "highestTierName") if k in topology}
        out.append(entry)
    return out


def _quantities_as_strings(pod_spec: dict[str, Any]) -> None:
    """A Job's template may write a quantity as a number (`metax-tech.com/gpu: 2`, as seed 002's
    sample does): the Job CRD keeps it as int-or-string, the Pod API takes it either way, but the
    typed client refuses a number, so write it as text."""
    for container in [*(pod_spec.get("containers") or []), *(pod_spec.get("initContainers") or [])]:
        for kind in ("requests", "limits"):
            values = (container.get("resources") or {}).get(kind)
            if isinstance(values, dict):
                container["resources"][kind] = {name: str(value) for name, value in values.items()}


def min_resources(job: dict[str, Any], priority_of: Callable[[str], int] = lambda _: 0) -> dict[str, str]:
    """The PodGroup's minResources: the quota usage (quota.py) of the pods the gang needs, tasks
    taken by their template's priority class, highest first (`priority_of` gives a class's value,
    0 when unknown). When the job's minAvailable is below the sum of its tasks' minAvailable, the
    first minAvailable pods in that order; otherwise every task's minAvailable, then the rest of
    its replicas until minAvailable pods are counted.

    Upstream: pkg/controllers/job/job_controller_actions.go (calcPGMinResources),
    job_controller_util.go (CalcFirstCountResources, CalcPGMinResources)."""
    tasks = sorted(job["spec"].get("tasks") or [], key=lambda t: -priority_of(((t.get("template") or {}).get("spec") or {}).get("priorityClassName") or ""))
    need = int(job["spec"]["minAvailable"])
    total: quota.Usage = {}

    def count(task: dict[str, Any], pods: int) -> None:
        nonlocal total
        total = quota.add(total, quota.times(quota.pod_usage((task.get("template") or {}).get("spec") or {}), pods))

    def task_min(task: dict[str, Any]) -> int:
        return int(task["minAvailable"] if task.get("minAvailable") is not None else task.get("replicas", 0))

    if need < sum(task_min(t) for t in tasks):
        for task in tasks:
            replicas = int(task.get("replicas", 0))
            count(task, min(need, replicas))
            need -= replicas
            if need <= 0:
                break
        return quota.as_resource_list(total)
    counted = 0
    for task in tasks:
        pods = min(task_min(task), need - counted)
        count(task, pods)
        counted += pods
        if counted >= need:
            return quota.as_resource_list(total)
    left = need - counted
    for task in tasks:
        spare = int(task.get("replicas", 0)) - task_min(task)
        if spare <= 0:
            continue
        count(task, min(spare, left))
        left -= min(spare, left)
        if left <= 0:
            break
    return quota.as_resource_list(total)
