"""The reference webhook's queue rules, as Volcano's: a Job is admitted only to a queue whose
status says Open (pkg/webhooks/admission/jobs/validate/admit_job.go; a queue just created, not
yet opened by the queue controller, is refused like a closed one), and a Queue's deserved share
and guarantee may not exceed its capability (pkg/webhooks/admission/queues/validate/validate_queue.go)."""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from reference_scheduler.webhooks import validate_job, validate_queue


def job(queue: str) -> dict[str, Any]:
    task = {"name": "work", "replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}
    return {"metadata": {"name": "j"}, "spec": {"queue": queue, "tasks": [task]}}


def lookup(status: Mapping[str, Any] | None) -> validate_job.QueueLookup:
    q: dict[str, Any] = {"metadata": {"name": "q"}, "spec": {"weight": 1}}
    if status is not None:
        q["status"] = status
    return lambda name: q if name == "q" else None


@pytest.mark.parametrize(
    ("status", "refusal"),
    [
        ({"state": "Open"}, ""),
        (None, "can only submit job to queue with state `Open`, queue `q` status is ``;"),
        ({}, "can only submit job to queue with state `Open`, queue `q` status is ``;"),
        ({"state": "Closed"}, "can only submit job to queue with state `Open`, queue `q` status is `Closed`;"),
        ({"state": "Closing"}, "can only submit job to queue with state `Open`, queue `q` status is `Closing`;"),
    ],
)
def test_only_an_open_queue_takes_jobs(status: Mapping[str, Any] | None, refusal: str) -> None:
    assert validate_job.validate_create(job("q"), lookup(status), lambda: []) == refusal


def queue(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "q"}, "spec": {"weight": 1, **spec}}


@pytest.mark.parametrize(
    ("spec", "refusal"),
    [
        ({"deserved": {"cpu": "2"}, "capability": {"cpu": "2"}}, ""),
        ({"deserved": {"cpu": "3"}}, ""),  # no capability: no cap
        ({"deserved": {"cpu": "2"}, "guarantee": {"resource": {"cpu": "2"}}}, ""),
        ({"deserved": {"cpu": "3"}, "capability": {"cpu": "2"}}, 'requestBody.spec.deserved: Invalid value: "cpu 3000.00, memory 0.00": deserved should less equal than capability'),
        # capability names no memory: it counts as zero, below the deserved memory
        ({"deserved": {"memory": "1Gi"}, "capability": {"cpu": "2"}}, "deserved should less equal than capability"),
        ({"guarantee": {"resource": {"cpu": "3"}}, "capability": {"cpu": "2"}}, "guarantee should less equal than capability"),
        ({"deserved": {"cpu": "1"}, "guarantee": {"resource": {"cpu": "2"}}}, "guarantee should less equal than deserved"),
    ],
)
def test_queue_resources(spec: dict[str, Any], refusal: str) -> None:
    """Volcano's validateResourceOfQueue (pkg/webhooks/admission/queues/validate/validate_queue.go)."""
    message = validate_queue.validate(queue(**spec))
    assert (refusal in message) if refusal else message == "", message
    assert bool(message) is bool(refusal)
