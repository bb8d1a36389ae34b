"""`dependsOn`: a task's pods are created only once the tasks it names are ready.

Upstream: pkg/controllers/job/job_controller_actions.go (waitDependsOnTaskMeetCondition,
isDependsOnPodsReady). A task is ready when at least its minAvailable pods are Running or
Succeeded with every container ready; `iteration: any` with several names needs one of them,
otherwise all.
"""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.controllers.job import pods


def _pod_ready(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") not in ("Running", "Succeeded"):
        return False
    return all(c.get("ready") for c in status.get("containerStatuses") or [])


def task_ready(job: Mapping[str, Any], name: str, job_pods: Mapping[str, Mapping[str, Any]]) -> bool:
    task = next((t for t in job["spec"].get("tasks") or [] if t.get("name") == name), None)
    if task is None:
        return True
    ready = 0
    for i in range(int(task.get("replicas", 0))):
        pod = job_pods.get(pods.pod_name(job["metadata"]["name"], name, i))
        if pod is not None and _pod_ready(pod):
            ready += 1
    return ready >= int(task.get("minAvailable", task.get("replicas", 0)))


def ready_to_start(job: Mapping[str, Any], task: Mapping[str, Any], job_pods: Mapping[str, Mapping[str, Any]]) -> bool:
    depends = task.get("dependsOn")
    if not depends or not depends.get("name"):
        return True
    names = list(depends["name"])
    if len(names) > 1 and depends.get("iteration") == "any":
        return any(task_ready(job, n, job_pods) for n in names)
    return all(task_ready(job, n, job_pods) for n in names)
