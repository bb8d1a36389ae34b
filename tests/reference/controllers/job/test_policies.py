"""Which action a job event leads to (reference_scheduler/controllers/job/policies.py), in memory:
a table of job and task policies, an event, and the action and delay Volcano's applyPolicies
gives (upstream: pkg/controllers/job/job_controller_util.go)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from reference_scheduler.controllers.job import policies
from reference_scheduler.controllers.job.policies import Request
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task

Policy = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    request: Request
    action: str
    delay_s: float = 0.0
    job_policies: tuple[Policy, ...] = ()
    # The policies of task "worker"; task "master" never has any.
    worker_policies: tuple[Policy, ...] | None = None


def _job(case: Case) -> dict[str, Any]:
    worker_policies = list(case.worker_policies) if case.worker_policies is not None else None
    return harness.job(task("master"), task("worker", replicas=2, policies=worker_policies), policies=list(case.job_policies))


FAILED = Request("PodFailed", "worker", "tj-worker-0", exit_code=1)
EVICTED = Request("PodEvicted", "worker", "tj-worker-0")
PENDING = Request("PodPending", "worker", "tj-worker-0")
CASES = [
    # No policy: every event is only a sync (the phase machine then decides, e.g. running.go).
    Case("no-policy", FAILED, "SyncJob"),
    Case("no-policy-unknown", Request("Unknown"), "SyncJob"),
    # An `event` policy matches that event only.
    Case("event-matches", FAILED, "RestartJob", job_policies=({"event": "PodFailed", "action": "RestartJob"},)),
    Case("event-other", EVICTED, "SyncJob", job_policies=({"event": "PodFailed", "action": "RestartJob"},)),
    # An `events` list matches any of them.
    Case("events-first", EVICTED, "TerminateJob", job_policies=({"events": ["PodEvicted", "PodFailed"], "action": "TerminateJob"},)),
    Case("events-second", FAILED, "TerminateJob", job_policies=({"events": ["PodEvicted", "PodFailed"], "action": "TerminateJob"},)),
    Case("events-none-listed", Request("TaskCompleted", "worker"), "SyncJob", job_policies=({"events": ["PodEvicted", "PodFailed"], "action": "TerminateJob"},)),
    # `*` matches any event...
    Case("any-unknown", Request("Unknown"), "RestartJob", job_policies=({"event": "*", "action": "RestartJob"},)),
    Case("any-task-failed", Request("TaskFailed", "worker"), "AbortJob", job_policies=({"event": "*", "action": "AbortJob"},)),
    # ... but never an event the controller raises for itself.
    Case("any-not-out-of-sync", Request("OutOfSync"), "SyncJob", job_policies=({"event": "*", "action": "RestartJob"},)),
    Case("any-not-command-issued", Request("CommandIssued"), "SyncJob", job_policies=({"event": "*", "action": "RestartJob"},)),
    Case("any-not-pod-running", Request("PodRunning", "worker"), "SyncJob", job_policies=({"event": "*", "action": "RestartJob"},)),
    Case("named-internal-event-ignored", Request("OutOfSync"), "SyncJob", job_policies=({"event": "OutOfSync", "action": "RestartJob"},)),
    # A pending pod is an event only for a policy with a timeout: how long is too long.
    Case("pending-without-timeout", PENDING, "SyncJob", job_policies=({"event": "PodPending", "action": "AbortJob"},)),
    Case("pending-any-without-timeout", PENDING, "SyncJob", job_policies=({"event": "*", "action": "AbortJob"},)),
    Case("pending-with-timeout", PENDING, "AbortJob", 60.0, job_policies=({"event": "PodPending", "action": "AbortJob", "timeout": "1m"},)),
    Case("pending-any-with-timeout", PENDING, "RestartJob", 10.0, job_policies=({"event": "*", "action": "RestartJob", "timeout": "10s"},)),
    # A timeout delays any other event's action as well.
    Case("failed-with-timeout", FAILED, "RestartJob", 90.0, job_policies=({"event": "PodFailed", "action": "RestartJob", "timeout": "1m30s"},)),
    # `exitCode` matches a failed pod's first container's exit code, and nothing without one.
    Case("exit-code-matches", Request("PodFailed", "worker", "p", exit_code=3), "RestartJob", job_policies=({"exitCode": 3, "action": "RestartJob"},)),
    Case("exit-code-other", Request("PodFailed", "worker", "p", exit_code=4), "SyncJob", job_policies=({"exitCode": 3, "action": "RestartJob"},)),
    Case("exit-code-none", Request("PodFailed", "worker", "p"), "SyncJob", job_policies=({"exitCode": 3, "action": "RestartJob"},)),
    # The first matching policy wins, in the order written.
    Case("first-event-then-exit-code", FAILED, "AbortJob", job_policies=({"event": "PodFailed", "action": "AbortJob"}, {"exitCode": 1, "action": "RestartJob"})),
    Case("first-exit-code-then-event", FAILED, "RestartJob", job_policies=({"exitCode": 1, "action": "RestartJob"}, {"event": "PodFailed", "action": "AbortJob"})),
    Case("skips-non-matching", FAILED, "RestartTask", job_policies=({"event": "PodEvicted", "action": "AbortJob"}, {"event": "PodFailed", "action": "RestartTask"})),
    # Task policies come before the job's...
    Case(
        "task-over-job",
        FAILED,
        "RestartTask",
        job_policies=({"event": "PodFailed", "action": "AbortJob"},),
        worker_policies=({"event": "PodFailed", "action": "RestartTask"},),
    ),
    Case("task-timeout", EVICTED, "RestartPod", 0.5, worker_policies=({"event": "PodEvicted", "action": "RestartPod", "timeout": "500ms"},)),
    # ... the job's apply when the task has none that matches...
    Case(
        "task-no-match-falls-to-job",
        FAILED,
        "AbortJob",
        job_policies=({"event": "PodFailed", "action": "AbortJob"},),
        worker_policies=({"event": "PodEvicted", "action": "RestartPod"},),
    ),
    Case("task-without-policies", Request("PodFailed", "master", "tj-master-0"), "AbortJob", job_policies=({"event": "PodFailed", "action": "AbortJob"},), worker_policies=({"event": "PodFailed", "action": "RestartTask"},)),
    Case("unknown-task-gets-job-policies", Request("PodFailed", "gone", "p"), "AbortJob", job_policies=({"event": "PodFailed", "action": "AbortJob"},), worker_policies=({"event": "PodFailed", "action": "RestartTask"},)),
    # ... and an event of no task (the PodGroup went Unknown) sees only the job's.
    Case("job-event-ignores-task-policies", Request("Unknown"), "SyncJob", worker_policies=({"event": "Unknown", "action": "RestartJob"},)),
    Case("task-event-from-task-policy", Request("TaskCompleted", "worker"), "CompleteJob", worker_policies=({"event": "TaskCompleted", "action": "CompleteJob"},)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_decide(case: Case) -> None:
    assert policies.decide(_job(case), case.request) == policies.Decision(case.action, case.delay_s)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [(None, None), ("", None), ("10s", 10.0), ("1m", 60.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), ("2h15m", 8100.0), ("1.5s", 1.5), ("1m500ms", 60.5)],
)
def test_parse_timeout(text: str | None, seconds: float | None) -> None:
    assert policies.parse_timeout(text) == seconds


@pytest.mark.parametrize(
    ("policy", "events"),
    [
        ({"event": "PodFailed"}, ["PodFailed"]),
        ({"events": ["PodEvicted", "Unknown"]}, ["PodEvicted", "Unknown"]),
        ({"events": ["PodEvicted"], "event": "PodFailed"}, ["PodEvicted", "PodFailed"]),
        ({"exitCode": 1}, []),
    ],
)
def test_events_of(policy: Policy, events: list[str]) -> None:
    assert policies.events_of(policy) == events
