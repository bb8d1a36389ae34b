"""The Job phase machine: what each action does in each phase.

Upstream: pkg/controllers/job/state/*.go. Each phase handles an action by killing pods (all,
keeping finished ones, or a target task/pod) or by syncing (creating what is missing), then
updating the status through a function that may move the phase. The controller supplies the
three operations; this module only decides.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

Status = dict[str, Any]
UpdateFn = Callable[[Status], bool]
RETAIN_NONE = "none"  # kill every pod
RETAIN_SOFT = "soft"  # keep Succeeded and Failed pods
FINAL = ("Completed", "Failed", "Terminated")


class Ops(Protocol):
    job: dict[str, Any]

    def kill_job(self, retain: str, update: UpdateFn | None) -> None: ...

    def kill_target(self, task: str, pod: str, update: UpdateFn | None) -> None: ...

    def sync_job(self, update: UpdateFn | None) -> None: ...


def _set(phase: str, retry: bool = False) -> UpdateFn:
    def update(status: Status) -> bool:
        status["state"]["phase"] = phase
        if retry:
            status["retryCount"] = int(status.get("retryCount", 0)) + 1
        return True

    return update


def _when_drained(phase: str) -> UpdateFn:
    """-ing phases end once no pod is terminating, pending or running."""

    def update(status: Status) -> bool:
        if status.get("terminating", 0) or status.get("pending", 0) or status.get("running", 0):
            return False
        status["state"]["phase"] = phase
        return True

    return update


def total_replicas(job: dict[str, Any]) -> int:
    return sum(int(t.get("replicas", 0)) for t in job["spec"].get("tasks") or [])


def _pending_update(job: dict[str, Any]) -> UpdateFn:
    def update(status: Status) -> bool:
        if int(job["spec"]["minAvailable"]) <= status.get("running", 0) + status.get("succeeded", 0) + status.get("failed", 0):
            status["state"]["phase"] = "Running"
            return True
        return False

    return update


def _running_update(job: dict[str, Any]) -> UpdateFn:
    spec = job["spec"]

    def update(status: Status) -> bool:
        replicas = total_replicas(job)
        if replicas == 0:
            return False
        succeeded, failed = status.get("succeeded", 0), status.get("failed", 0)
        min_success = spec.get("minSuccess")
        if min_success is not None and succeeded >= int(min_success):
            status["state"]["phase"] = "Completed"
            return True
        if succeeded + failed == replicas:
            task_min_total = sum(int(t.get("minAvailable", t.get("replicas", 0))) for t in spec.get("tasks") or [])
            if int(spec["minAvailable"]) >= task_min_total:
                # Every task must have its own minAvailable of succeeded pods.
                for task in spec.get("tasks") or []:
                    if task.get("minAvailable") is None:
                        continue
                    counts = (status.get("taskStatusCount") or {}).get(task["name"])
                    if counts is not None and (counts.get("phase") or {}).get("Succeeded", 0) < int(task["minAvailable"]):
                        status["state"]["phase"] = "Failed"
                        return True
            if min_success is not None and succeeded < int(min_success):
                status["state"]["phase"] = "Failed"
            elif succeeded >= int(spec["minAvailable"]):
                status["state"]["phase"] = "Completed"
            else:
                status["state"]["phase"] = "Failed"
            return True
        if status.get("pending", 0) > replicas - int(spec["minAvailable"]):
            status["state"]["phase"] = "Pending"
            return True
        return False

    return update


def _restarting_update(job: dict[str, Any]) -> UpdateFn:
    def update(status: Status) -> bool:
        if int(status.get("retryCount", 0)) >= int(job["spec"].get("maxRetry", 3)):
            status["state"]["phase"] = "Failed"
            return True
        if total_replicas(job) - status.get("terminating", 0) >= int(status.get("minAvailable", 0)):
            status["state"]["phase"] = "Pending"
            return True
        return False

    return update


def execute(ops: Ops, phase: str, action: str, task: str = "", pod: str = "") -> None:
    job = ops.job
    if phase in ("Pending", "Running", ""):
        if action == "RestartJob":
            return ops.kill_job(RETAIN_NONE, _set("Restarting", retry=True))
        if action in ("RestartTask", "RestartPod"):
            return ops.kill_target(task, pod if action == "RestartPod" else "", _set("Restarting", retry=True))
        if action == "AbortJob":
            return ops.kill_job(RETAIN_SOFT, _set("Aborting"))
        if action == "CompleteJob":
            return ops.kill_job(RETAIN_SOFT, _set("Completing"))
        if action == "TerminateJob":
            return ops.kill_job(RETAIN_SOFT, _set("Terminating"))
        return ops.sync_job(_running_update(job) if phase == "Running" else _pending_update(job))
    if phase == "Restarting":
        if action == "SyncJob":
            return ops.sync_job(_restarting_update(job))
        if action in ("RestartTask", "RestartPod"):
            return ops.kill_target(task, pod if action == "RestartPod" else "", _restarting_update(job))
        return ops.kill_job(RETAIN_NONE, _restarting_update(job))
    if phase in ("Aborting", "Aborted"):
        if action == "ResumeJob":
            return ops.kill_job(RETAIN_SOFT, _set("Restarting", retry=True))
        return ops.kill_job(RETAIN_SOFT, _when_drained("Aborted") if phase == "Aborting" else None)
    if phase == "Completing":
        return ops.kill_job(RETAIN_SOFT, _when_drained("Completed"))
    if phase == "Terminating":
        return ops.kill_job(RETAIN_SOFT, _when_drained("Terminated"))
    # Completed, Terminated, Failed: final; only stragglers are cleaned up.
    return ops.kill_job(RETAIN_SOFT, None)
