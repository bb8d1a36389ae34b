"""The job phase machine (reference_scheduler/controllers/job/states.py) in memory: for each phase
and action, which operation it asks of the sync (kill every pod, kill a target, or sync) with
which pods kept, and what the status function it hands over does to a status.

Two tables: `DISPATCH` pins the operation per (phase, action) and probes the update function on
one status; `UPDATES` walks each update function's conditions (pending -> running, running's
ends, restarting's ends, the -ing phases waiting for their pods to drain)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from reference_scheduler.controllers.job import states
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import status, task

NONE, SOFT = states.RETAIN_NONE, states.RETAIN_SOFT
# Two workers, both needed; maxRetry 3 (the default).
JOB = harness.job(task("worker", replicas=2))
FINAL = ("Completed", "Failed", "Terminated")


@dataclasses.dataclass(frozen=True)
class Dispatch:
    phase: str
    action: str
    op: str
    # kill_job's pods kept (NONE: none, SOFT: the finished ones); kill_target's (task, pod).
    retain: str | None = None
    target: tuple[str, str] | None = None
    # The update function handed over, applied to `before`: the phase and retryCount after and
    # whether it reported a change. `to=None` with `changed=None`: no update function at all.
    before: dict[str, Any] = dataclasses.field(default_factory=lambda: status("Running", retry=0, min_available=2))
    to: str | None = None
    retry: int = 0
    changed: bool | None = True
    task: str = "worker"
    pod: str = "tj-worker-1"

    @property
    def id(self) -> str:
        return f"{self.phase or 'new'}-{self.action}"


def _active(phase: str) -> list[Dispatch]:
    """Pending, Running and a job with no phase yet take the same actions the same way
    (upstream: state/pending.go, state/running.go)."""
    synced_to = {"": "Running", "Pending": "Running", "Running": "Completed"}[phase]
    # What the sync's update sees: every pod running (Pending's goal), every pod done (Running's).
    synced_from = status(phase, min_available=2, running=2) if phase != "Running" else status(phase, min_available=2, succeeded=2)
    return [
        Dispatch(phase, "RestartJob", "kill_job", retain=NONE, to="Restarting", retry=1),
        # A task's restart kills the whole task: the pod named by the event is not passed on.
        Dispatch(phase, "RestartTask", "kill_target", target=("worker", ""), to="Restarting", retry=1),
        Dispatch(phase, "RestartPod", "kill_target", target=("worker", "tj-worker-1"), to="Restarting", retry=1),
        Dispatch(phase, "AbortJob", "kill_job", retain=SOFT, to="Aborting"),
        Dispatch(phase, "CompleteJob", "kill_job", retain=SOFT, to="Completing"),
        Dispatch(phase, "TerminateJob", "kill_job", retain=SOFT, to="Terminating"),
        Dispatch(phase, "SyncJob", "sync_job", before=synced_from, to=synced_to),
        # Resuming a job that was never aborted is a plain sync (upstream: running.go's default).
        Dispatch(phase, "ResumeJob", "sync_job", before=synced_from, to=synced_to),
    ]


DISPATCH: list[Dispatch] = [
    *_active(""),
    *_active("Pending"),
    *_active("Running"),
    # state/restarting.go: every action but a sync or a targeted restart kills every pod again;
    # each hands over the same function: Failed once retries are spent, else Pending once enough
    # pods are gone. The retry was counted when the restart began, so it is not counted again.
    Dispatch("Restarting", "SyncJob", "sync_job", before=status("Restarting", retry=1, min_available=2), to="Pending", retry=1),
    Dispatch("Restarting", "RestartTask", "kill_target", target=("worker", ""), before=status("Restarting", retry=1, min_available=2), to="Pending", retry=1),
    Dispatch("Restarting", "RestartPod", "kill_target", target=("worker", "tj-worker-1"), before=status("Restarting", retry=1, min_available=2), to="Pending", retry=1),
    Dispatch("Restarting", "RestartJob", "kill_job", retain=NONE, before=status("Restarting", retry=3, min_available=2), to="Failed", retry=3),
    Dispatch("Restarting", "AbortJob", "kill_job", retain=NONE, before=status("Restarting", retry=1, min_available=2), to="Pending", retry=1),
    Dispatch("Restarting", "ResumeJob", "kill_job", retain=NONE, before=status("Restarting", retry=1, min_available=2), to="Pending", retry=1),
    # state/aborting.go: finished pods are kept; Aborted once nothing runs; a resume restarts.
    Dispatch("Aborting", "SyncJob", "kill_job", retain=SOFT, before=status("Aborting", succeeded=1), to="Aborted"),
    Dispatch("Aborting", "RestartJob", "kill_job", retain=SOFT, before=status("Aborting", failed=2), to="Aborted"),
    Dispatch("Aborting", "ResumeJob", "kill_job", retain=SOFT, before=status("Aborting", retry=1), to="Restarting", retry=2),
    # state/aborted.go: only a resume does anything; anything else cleans up, phase untouched.
    Dispatch("Aborted", "ResumeJob", "kill_job", retain=SOFT, before=status("Aborted"), to="Restarting", retry=1),
    Dispatch("Aborted", "SyncJob", "kill_job", retain=SOFT, to=None, changed=None),
    Dispatch("Aborted", "RestartJob", "kill_job", retain=SOFT, to=None, changed=None),
    # state/completing.go, state/terminating.go: every action waits for the pods to drain.
    Dispatch("Completing", "SyncJob", "kill_job", retain=SOFT, before=status("Completing", succeeded=2), to="Completed"),
    Dispatch("Completing", "RestartJob", "kill_job", retain=SOFT, before=status("Completing", succeeded=2), to="Completed"),
    Dispatch("Completing", "ResumeJob", "kill_job", retain=SOFT, before=status("Completing"), to="Completed"),
    Dispatch("Terminating", "SyncJob", "kill_job", retain=SOFT, before=status("Terminating", failed=1), to="Terminated"),
    Dispatch("Terminating", "AbortJob", "kill_job", retain=SOFT, before=status("Terminating"), to="Terminated"),
    Dispatch("Terminating", "ResumeJob", "kill_job", retain=SOFT, before=status("Terminating"), to="Terminated"),
    # state/finished.go: final phases only clean up stragglers, whatever the action.
    *[Dispatch(phase, action, "kill_job", retain=SOFT, to=None, changed=None) for phase in FINAL for action in ("SyncJob", "RestartJob", "ResumeJob", "AbortJob")],
]


@pytest.mark.parametrize("case", DISPATCH, ids=lambda c: c.id)
def test_dispatch(case: Dispatch) -> None:
    ops = harness.OpsRecorder(JOB)
    states.execute(ops, case.phase, case.action, case.task, case.pod)
    call = ops.only_call()
    assert call.op == case.op
    if case.op == "kill_job":
        assert call.retain == case.retain
    if case.op == "kill_target":
        assert (call.task, call.pod) == case.target
    if case.changed is None:
        assert call.update is None, "a final or aborted phase moves nowhere on its own"
        return
    assert call.update is not None
    after = dict(case.before, state=dict(case.before["state"]))
    assert call.update(after) is case.changed
    assert after["state"]["phase"] == case.to
    assert after["retryCount"] == case.retry


@dataclasses.dataclass(frozen=True)
class Update:
    """One condition of an update function: the job, the status a sync computed, what follows."""

    id: str
    phase: str
    action: str
    job: dict[str, Any]
    before: dict[str, Any]
    changed: bool
    to: str
    retry: int = 0


def _job(*tasks: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return harness.job(*tasks, **spec)


THREE = _job(task("a", replicas=2), task("b", replicas=1))  # minAvailable 3 by default
UPDATES: list[Update] = [
    # state/pending.go: Running once minAvailable pods have started (running, or already ended).
    Update("pending-short-of-min", "Pending", "SyncJob", THREE, status("Pending", running=2, pending=1), False, "Pending"),
    Update("pending-min-running", "Pending", "SyncJob", THREE, status("Pending", running=3), True, "Running"),
    Update("pending-ended-count-as-started", "Pending", "SyncJob", THREE, status("Pending", running=1, succeeded=1, failed=1), True, "Running"),
    Update("new-job-follows-pending", "", "SyncJob", THREE, status("", running=3), True, "Running"),
    # state/running.go: the ends of a running job.
    Update("running-still-running", "Running", "SyncJob", THREE, status("Running", running=3), False, "Running"),
    Update("running-some-done", "Running", "SyncJob", THREE, status("Running", running=1, succeeded=2), False, "Running"),
    Update("running-all-succeeded", "Running", "SyncJob", THREE, status("Running", succeeded=3), True, "Completed"),
    Update("running-all-ended-too-few-succeeded", "Running", "SyncJob", THREE, status("Running", succeeded=2, failed=1), True, "Failed"),
    Update("running-all-failed", "Running", "SyncJob", THREE, status("Running", failed=3), True, "Failed"),
    Update("running-min-success-reached-early", "Running", "SyncJob", _job(task("a", replicas=3), minSuccess=2), status("Running", running=1, succeeded=2), True, "Completed"),
    Update("running-min-success-missed", "Running", "SyncJob", _job(task("a", replicas=3), minAvailable=1, minSuccess=3), status("Running", succeeded=2, failed=1), True, "Failed"),
    # minAvailable 1 alone would complete with 2 successes; minSuccess is what fails it.
    Update("running-min-available-met-without-min-success", "Running", "SyncJob", _job(task("a", replicas=3), minAvailable=1), status("Running", succeeded=2, failed=1), True, "Completed"),
    # When the job's minAvailable covers every task's, each task needs its own minAvailable of
    # successes: b's only pod failed, so the job fails although 3 >= minAvailable pods succeeded.
    Update(
        "running-task-min-available-missed",
        "Running",
        "SyncJob",
        _job(task("a", replicas=3, min_available=2), task("b", replicas=1, min_available=1), minAvailable=3),
        status("Running", succeeded=3, failed=1, taskStatusCount={"a": {"phase": {"Succeeded": 3}}, "b": {"phase": {"Failed": 1}}}),
        True,
        "Failed",
    ),
    # ... and when it does not (2 < 2 + 1), the per-task rule is skipped.
    Update(
        "running-task-rule-off-below-task-sum",
        "Running",
        "SyncJob",
        _job(task("a", replicas=3, min_available=2), task("b", replicas=1, min_available=1), minAvailable=2),
        status("Running", succeeded=3, failed=1, taskStatusCount={"a": {"phase": {"Succeeded": 3}}, "b": {"phase": {"Failed": 1}}}),
        True,
        "Completed",
    ),
    # More pods pending than the gang can spare: back to Pending (a pod was lost and recreated).
    Update("running-falls-back-to-pending", "Running", "SyncJob", THREE, status("Running", running=2, pending=1), True, "Pending"),
    Update("running-spare-pod-pending", "Running", "SyncJob", _job(task("a", replicas=3), minAvailable=2), status("Running", running=2, pending=1), False, "Running"),
    Update("running-no-replicas", "Running", "SyncJob", _job(task("a", replicas=0), minAvailable=0), status("Running"), False, "Running"),
    # state/restarting.go: Failed when retries are spent (the job's maxRetry), else Pending once
    # the pods left alive (replicas - terminating) are enough for the status' minAvailable.
    Update("restarting-retries-spent", "Restarting", "SyncJob", _job(task("a", replicas=3), maxRetry=2), status("Restarting", retry=2, min_available=3), True, "Failed", retry=2),
    Update("restarting-retries-left", "Restarting", "SyncJob", _job(task("a", replicas=3), maxRetry=5), status("Restarting", retry=2, min_available=3), True, "Pending", retry=2),
    Update("restarting-pods-still-terminating", "Restarting", "SyncJob", THREE, status("Restarting", retry=1, min_available=3, terminating=1), False, "Restarting", retry=1),
    Update("restarting-enough-gone", "Restarting", "RestartJob", THREE, status("Restarting", retry=1, min_available=2, terminating=1), True, "Pending", retry=1),
    # The retry is counted from the status, whatever it was.
    Update("restart-counts-on", "Running", "RestartJob", THREE, status("Running", retry=2), True, "Restarting", retry=3),
    # state/aborting.go, completing.go, terminating.go: any pod terminating, pending or running
    # keeps the -ing phase.
    Update("aborting-terminating", "Aborting", "SyncJob", THREE, status("Aborting", terminating=1), False, "Aborting"),
    Update("aborting-pending", "Aborting", "SyncJob", THREE, status("Aborting", pending=1), False, "Aborting"),
    Update("aborting-running", "Aborting", "SyncJob", THREE, status("Aborting", running=1), False, "Aborting"),
    Update("completing-running", "Completing", "SyncJob", THREE, status("Completing", running=1, succeeded=2), False, "Completing"),
    Update("completing-drained-with-failures", "Completing", "SyncJob", THREE, status("Completing", succeeded=1, failed=2), True, "Completed"),
    Update("terminating-terminating", "Terminating", "SyncJob", THREE, status("Terminating", terminating=2), False, "Terminating"),
    Update("terminating-drained", "Terminating", "SyncJob", THREE, status("Terminating", succeeded=3), True, "Terminated"),
]


@pytest.mark.parametrize("case", UPDATES, ids=lambda c: c.id)
def test_update(case: Update) -> None:
    ops = harness.OpsRecorder(case.job)
    states.execute(ops, case.phase, case.action)
    update = ops.only_call().update
    assert update is not None
    after = dict(case.before, state=dict(case.before["state"]))
    assert update(after) is case.changed
    assert after["state"]["phase"] == case.to
    assert after["retryCount"] == case.retry


def test_total_replicas_counts_every_task() -> None:
    assert states.total_replicas(THREE) == 3
    assert states.total_replicas({"spec": {}}) == 0
