"""One job's sync (reference_scheduler/controllers/job/sync.py) in memory, against a fake
controller (fake_controller.py): for a Job, its pods, PodGroup, Commands and evictions, the
writes the sync makes, in order, and the status it leaves. Then the status helpers.

Upstream: pkg/controllers/job/job_controller_actions.go (killJob, syncJob), state/*.go."""

from __future__ import annotations

import calendar
import copy
import dataclasses
import time
from typing import Any

import kubernetes
import pytest

from reference_scheduler.controllers.job import pods, sync
from reference_scheduler.controllers.job.features import FULL, Features
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.fake_controller import (
    FakeController,
    apply_merge_patch,
)
from tests.reference.controllers.job.harness import task

Obj = dict[str, Any]
PG = "tj-" + harness.JOB_UID


def with_status(job: Obj, phase: str, version: int = 0, retry: int = 0, **state: Any) -> Obj:
    out = copy.deepcopy(job)
    out["status"] = {"state": {"phase": phase, **state}, "version": version, "retryCount": retry, "minAvailable": int(job["spec"]["minAvailable"])}
    return out


def pod(job: Obj, task_name: str, index: int, phase: str, version: int = 0, exit_code: int | None = None) -> Obj:
    body = pods.make_pod(job, next(t for t in job["spec"]["tasks"] if t["name"] == task_name), index, version, 0)
    body["metadata"]["uid"] = f"uid-{body['metadata']['name']}"
    body["status"] = {"phase": phase}
    if exit_code is not None:
        body["status"]["containerStatuses"] = [{"name": "main", "state": {"terminated": {"exitCode": exit_code, "finishedAt": "2026-01-01T00:00:00Z"}}}]
    return body


def podgroup(job: Obj, phase: str) -> Obj:
    """The job's PodGroup as the sync itself would make it, so it is not patched."""
    spec = {
        "minMember": int(job["spec"]["minAvailable"]),
        "minTaskMember": {t["name"]: int(t["minAvailable"]) for t in job["spec"]["tasks"]},
        "queue": job["spec"]["queue"],
        "minResources": pods.min_resources(job),
    }
    return {"metadata": {"name": PG, "namespace": harness.NAMESPACE, "uid": "uid-pg"}, "spec": spec, "status": {"phase": phase}}


def command(action: str) -> Obj:
    return {"metadata": {"name": "cmd", "namespace": harness.NAMESPACE, "creationTimestamp": "2026-01-01T00:00:00Z"}, "action": action, "target": {"kind": "Job", "name": "tj"}}


WORKERS = harness.job(task("worker", replicas=2), policies=[{"exitCode": 3, "action": "RestartJob"}, {"event": "PodEvicted", "action": "RestartJob"}])
WITH_SVC = harness.job(task("worker", replicas=2), plugins={"env": [], "svc": []})
TASK_POLICY = harness.job(task("master"), task("worker", replicas=2, policies=[{"event": "PodFailed", "action": "RestartTask"}]))
ONE_WORKER = harness.job(task("worker", replicas=1))
TTL = harness.job(task("worker"), ttlSecondsAfterFinished=0)
SVC_OBJECTS = [("ConfigMap", "tj-svc"), ("Service", "tj"), ("NetworkPolicy", "tj")]


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    job: Obj
    writes: list[tuple[str, str, str]]
    phase: str | None  # None: the job is gone
    pods: tuple[Obj, ...] = ()
    podgroup_phase: str | None = "Running"  # None: the job has no PodGroup yet
    new_podgroup_phase: str = "Pending"
    commands: tuple[Obj, ...] = ()
    evicted: tuple[str, ...] = ()  # pods of version 0 the watch saw deleted
    features: Features = FULL
    synced: bool = True
    retry: int = 0
    version: int = 0
    events: tuple[str, ...] = ()


def deleted(kind: str, *names: str) -> list[tuple[str, str, str]]:
    return [("delete", kind, n) for n in names]


STATUS = ("patch-status", "jobs", "tj")
CASES = [
    Case("new-job-becomes-pending", WORKERS, [STATUS], "Pending", podgroup_phase=None),
    # The first pass after a (re)start only syncs: the status catches up (Running) before the
    # failure it already shows is acted on.
    Case("first-pass-only-syncs", with_status(WORKERS, "Pending"), [STATUS], "Running", pods=(pod(WORKERS, "worker", 0, "Failed", exit_code=3), pod(WORKERS, "worker", 1, "Running")), synced=False),
    # The next pass acts: exit code 3 restarts the job; pods go first, then the status, then the
    # PodGroup (the next sync makes a new one).
    Case(
        "failure-restarts-job",
        with_status(WORKERS, "Running"),
        [*deleted("Pod", "tj-worker-0", "tj-worker-1"), STATUS, *deleted("podgroups", PG)],
        "Restarting",
        pods=(pod(WORKERS, "worker", 0, "Failed", exit_code=3), pod(WORKERS, "worker", 1, "Running")),
        retry=1,
        version=1,
        events=("ExecuteAction",),
    ),
    Case("other-exit-code-no-action", with_status(WORKERS, "Running"), [STATUS], "Running", pods=(pod(WORKERS, "worker", 0, "Failed", exit_code=4), pod(WORKERS, "worker", 1, "Running"))),
    # Without policies, a failure is only counted.
    Case("policies-off", with_status(WORKERS, "Running"), [STATUS], "Running", pods=(pod(WORKERS, "worker", 0, "Failed", exit_code=3), pod(WORKERS, "worker", 1, "Running")), features=Features(policies=False)),
    # A pod of an older version raises no event.
    Case("old-version-pod-ignored", with_status(WORKERS, "Running", version=1), [STATUS], "Running", pods=(pod(WORKERS, "worker", 0, "Failed", version=0, exit_code=3), pod(WORKERS, "worker", 1, "Running", version=1)), version=1),
    Case(
        "eviction-restarts-job",
        with_status(WORKERS, "Running"),
        [*deleted("Pod", "tj-worker-0"), STATUS, *deleted("podgroups", PG)],
        "Restarting",
        pods=(pod(WORKERS, "worker", 0, "Running"),),
        evicted=("tj-worker-1",),
        retry=1,
        version=1,
        events=("ExecuteAction",),
    ),
    # A task policy restarts only its task's pods.
    Case(
        "restart-task",
        with_status(TASK_POLICY, "Running"),
        [*deleted("Pod", "tj-worker-0", "tj-worker-1"), STATUS, *deleted("podgroups", PG)],
        "Restarting",
        pods=(pod(TASK_POLICY, "master", 0, "Running"), pod(TASK_POLICY, "worker", 0, "Failed", exit_code=1), pod(TASK_POLICY, "worker", 1, "Running")),
        retry=1,
        version=1,
        events=("ExecuteAction",),
    ),
    # A Command is consumed first; AbortJob keeps the finished pods.
    Case(
        "abort-command-keeps-finished",
        with_status(WORKERS, "Running"),
        [*deleted("commands", "cmd"), *deleted("Pod", "tj-worker-1"), STATUS, *deleted("podgroups", PG)],
        "Aborting",
        pods=(pod(WORKERS, "worker", 0, "Succeeded"), pod(WORKERS, "worker", 1, "Running")),
        commands=(command("AbortJob"),),
        version=1,
        events=("CommandIssued", "ExecuteAction"),
    ),
    # Drained: Aborted, and the plugins' objects are released.
    Case(
        "aborting-drains-and-releases",
        with_status(WITH_SVC, "Aborting"),
        [STATUS, *[("delete", kind, name) for kind, name in SVC_OBJECTS]],
        "Aborted",
        pods=(pod(WITH_SVC, "worker", 0, "Succeeded"),),
        podgroup_phase=None,
        version=1,
    ),
    # No pod is created while the PodGroup waits to be enqueued...
    Case("podgroup-pending-holds-pods", with_status(WORKERS, "Pending"), [("create", "podgroups", PG), STATUS], "Pending", podgroup_phase=None),
    # ... and once it is, the plugins' objects come first, then the missing pods.
    Case(
        "podgroup-inqueue-creates-pods",
        with_status(WITH_SVC, "Pending"),
        [*[("ensure", kind, name) for kind, name in SVC_OBJECTS], ("create", "Pod", "tj-worker-0"), ("create", "Pod", "tj-worker-1"), STATUS],
        "Pending",
        podgroup_phase="Inqueue",
    ),
    # A recreated pod pending leaves fewer running than the gang needs: back to Pending.
    Case("only-missing-pods-created", with_status(WORKERS, "Running"), [("create", "Pod", "tj-worker-1"), STATUS], "Pending", pods=(pod(WORKERS, "worker", 0, "Running"),)),
    # Scaled down: the pod beyond the replicas goes.
    Case("scale-down-deletes-extra", with_status(ONE_WORKER, "Running"), [*deleted("Pod", "tj-worker-1"), STATUS], "Running", pods=(pod(ONE_WORKER, "worker", 0, "Running"), pod(ONE_WORKER, "worker", 1, "Running"))),
    # A finished job past its TTL is deleted, nothing else.
    Case("ttl-deletes-finished-job", with_status(TTL, "Completed", lastTransitionTime="2026-01-01T00:00:00Z"), [*deleted("jobs", "tj")], None, podgroup_phase=None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_sync(case: Case) -> None:
    ctl = FakeController(case.job, case.features, case.new_podgroup_phase, case.synced)
    if case.podgroup_phase is not None:
        ctl.podgroups.put(podgroup(case.job, case.podgroup_phase))
    for cmd in case.commands:
        ctl.commands.put(cmd)
    evicted = [sync.Evicted(harness.NAMESPACE, "tj", "worker", name, 0, time.time()) for name in case.evicted]
    sync.JobSync(ctl, case.job, [copy.deepcopy(p) for p in case.pods], list(case.commands), evicted).run()
    assert ctl.writes.calls == case.writes
    assert tuple(ctl.events) == case.events
    if case.phase is None:
        assert ("jobs", "tj") not in ctl.custom.objects
        return
    status = ctl.job_status("tj")
    assert status["state"]["phase"] == case.phase
    assert (status.get("retryCount", 0), status.get("version", 0)) == (case.retry, case.version)


def test_created_pods_carry_the_plugins_mutations() -> None:
    job = with_status(WITH_SVC, "Pending")
    ctl = FakeController(job)
    ctl.podgroups.put(podgroup(job, "Inqueue"))
    run = sync.JobSync(ctl, job, [], [], [])
    run.run()
    created = run.pods["tj-worker-1"]
    env = harness.env_of(created["spec"]["containers"][0])
    assert env["VK_TASK_INDEX"] == "1"
    assert env["VC_WORKER_HOSTS"] == "configmap:tj-svc/VC_WORKER_HOSTS"
    assert (created["spec"]["hostname"], created["spec"]["subdomain"]) == ("tj-worker-1", "tj")


def test_an_event_is_acted_on_once() -> None:
    """The controller's memory of handled events outlives one sync. While a job completes, a
    failure whose action moves nothing (the phase waits for a pod still terminating, so the
    version stays) is seen on every pass; it is acted on once."""
    job = with_status(WORKERS, "Completing")
    terminating = pod(WORKERS, "worker", 1, "Running")
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    seen = [pod(WORKERS, "worker", 0, "Failed", exit_code=3), terminating]
    ctl = FakeController(job)
    for _ in range(3):
        sync.JobSync(ctl, job, copy.deepcopy(seen), [], []).run()
    assert ctl.events == ["ExecuteAction"]
    assert ctl.job_status("tj")["state"]["phase"] == "Completing"
    assert ctl.job_status("tj")["version"] == 0


def test_an_action_whose_pass_failed_is_taken_again() -> None:
    """The Command is consumed before its action runs; when the pass then fails (the status write
    refused with 409: the Job changed since the copy it was computed from), the controller keeps
    the action and the next pass takes it, as upstream requeues the request on an error."""
    job = with_status(WORKERS, "Running")
    running = (pod(WORKERS, "worker", 0, "Succeeded"), pod(WORKERS, "worker", 1, "Running"))
    ctl = FakeController(job)
    ctl.commands.put(command("AbortJob"))
    write = ctl.custom.patch_namespaced_custom_object_status

    def conflict(*args: Any, **kwargs: Any) -> Obj:
        raise kubernetes.client.ApiException(status=409, reason="Conflict")

    ctl.custom.patch_namespaced_custom_object_status = conflict  # type: ignore[method-assign]
    failed = sync.JobSync(ctl, job, [copy.deepcopy(p) for p in running], [command("AbortJob")], [])
    with pytest.raises(kubernetes.client.ApiException):
        failed.run()
    assert failed.consumed == ("AbortJob", None) and ("delete", "commands", "cmd") in ctl.writes.calls
    # What Controller.reconcile_all does with it; the Command is gone, the next pass acts anyway.
    ctl._replay[job["metadata"]["uid"]] = failed.consumed
    ctl.custom.patch_namespaced_custom_object_status = write  # type: ignore[method-assign]
    sync.JobSync(ctl, job, [copy.deepcopy(p) for p in running], [], []).run()
    assert ctl.job_status("tj")["state"]["phase"] == "Aborting" and ctl.job_status("tj")["version"] == 1
    assert ctl._replay == {}


# --- status helpers ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        ({"a": 1}, {"a": 2}, {"a": 2}),
        ({"a": 1, "b": 2}, {"a": 1}, {"a": 1, "b": None}),
        # A task's stale phase counts are removed, not merged into.
        ({"t": {"w": {"phase": {"Running": 2}}}}, {"t": {"w": {"phase": {"Succeeded": 2}}}}, {"t": {"w": {"phase": {"Running": None, "Succeeded": 2}}}}),
        ({"c": [1]}, {"c": [1, 2]}, {"c": [1, 2]}),
        ({}, {"state": {"phase": "Pending"}}, {"state": {"phase": "Pending"}}),
    ],
)
def test_merge_patch(old: Obj, new: Obj, patch: Obj) -> None:
    assert sync.merge_patch(old, new) == patch
    assert apply_merge_patch(old, patch) == new


def test_count_pod() -> None:
    counts = sync.new_counts()
    per_task: dict[str, dict[str, int]] = {}
    for p in (pod(WORKERS, "worker", 0, "Running"), pod(WORKERS, "worker", 1, "Succeeded"), pod(TASK_POLICY, "master", 0, "Weird")):
        sync.count_pod(p, counts, per_task)
    p = pod(WORKERS, "worker", 1, "Running")
    del p["status"]
    sync.count_pod(p, counts, per_task)
    assert counts == {"pending": 1, "running": 1, "succeeded": 1, "failed": 0, "terminating": 0, "unknown": 1}
    assert per_task == {"worker": {"Running": 1, "Succeeded": 1, "Pending": 1}, "master": {"Weird": 1}}


@pytest.mark.parametrize(
    ("status", "code", "finished"),
    [
        ({"containerStatuses": [{"state": {"terminated": {"exitCode": 3, "finishedAt": "2026-01-01T00:00:10Z"}}}]}, 3, calendar.timegm((2026, 1, 1, 0, 0, 10))),
        ({"containerStatuses": [{"state": {"terminated": {"exitCode": 0}}}]}, 0, None),
        ({"containerStatuses": [{"state": {"running": {}}}]}, None, None),
        ({}, None, None),
    ],
)
def test_exit_code_and_finish(status: Obj, code: int | None, finished: float | None) -> None:
    assert sync.exit_code({"status": status}) == code
    assert sync.finished_at({"status": status}) == finished
