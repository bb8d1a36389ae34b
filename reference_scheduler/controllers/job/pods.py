"""The pods a Job's tasks make: names, labels and annotations as Volcano's controller sets them.

Upstream: pkg/controllers/job/job_controller_util.go (createJobPod).
"""

from __future__ import annotations

import copy
from typing import Any

from reference_scheduler.scheduler.api import resource

GROUP_NAME = "scheduling.k8s.io/group-name"
JOB_NAME = "volcano.sh/job-name"
JOB_NAMESPACE = "volcano.sh/job-namespace"
TASK_SPEC = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"
QUEUE_NAME = "volcano.sh/queue-name"
JOB_VERSION = "volcano.sh/job-version"
RETRY_COUNT = "volcano.sh/job-retry-count"
TEMPLATE_KEY = "volcano.sh/template-uid"


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
    labels = dict(pod_meta.get("labels") or {})
    labels.update({TASK_INDEX: str(index), JOB_NAME: meta["name"], TASK_SPEC: task["name"], JOB_NAMESPACE: meta["namespace"], QUEUE_NAME: spec["queue"]})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name(meta["name"], task["name"], index), "namespace": meta["namespace"], "labels": labels, "annotations": annotations, "ownerReferences": [owner(job)]},
        "spec": pod_spec,
    }


def _quantities_as_strings(pod_spec: dict[str, Any]) -> None:
    """A Job's template may write a quantity as a number (`metax-tech.com/gpu: 2`, as seed 002's
    sample does): the Job CRD keeps it as int-or-string, the Pod API takes it either way, but the
    typed client refuses a number, so write it as text."""
    for container in [*(pod_spec.get("containers") or []), *(pod_spec.get("initContainers") or [])]:
        for kind in ("requests", "limits"):
            values = (container.get("resources") or {}).get(kind)
            if isinstance(values, dict):
                container["resources"][kind] = {name: str(value) for name, value in values.items()}


def min_resources(job: dict[str, Any]) -> dict[str, str]:
    """The requests of the first minAvailable pods, task by task (Volcano's calcPGMinResources)."""
    need = int(job["spec"]["minAvailable"])
    total = resource.Resource()
    for task in job["spec"].get("tasks") or []:
        per_pod = resource.Resource.of_pod(task.get("template") or {})
        for _ in range(int(task.get("replicas", 0))):
            if need <= 0:
                break
            total.add(per_pod)
            need -= 1
    out = {}
    for name, value in total.values.items():
        out[name] = f"{int(round(value))}m" if name == "cpu" else str(int(round(value)))
    return out
