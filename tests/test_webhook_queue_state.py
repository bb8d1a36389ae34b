"""Job admission and the queue's state: only a queue whose status says Open takes jobs, as in
Volcano's pkg/webhooks/admission/jobs/validate/admit_job.go; a queue just created (no state yet,
the queue controller has not opened it) is refused like a closed one."""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from reference_scheduler.webhooks import validate_job


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
