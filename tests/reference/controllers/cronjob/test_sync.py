"""One CronJob sync in memory (a fake API): which Jobs it creates and deletes, the events it
records and the status it leaves, as Volcano's cronjob controller."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

import pytest

from reference_scheduler.controllers.cronjob import sync

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 1, 7, 10, 17, 30, tzinfo=UTC)
T_1017 = "2026-01-07T10:17:00Z"
T_1016 = "2026-01-07T10:16:00Z"


@dataclasses.dataclass
class FakeCluster:
    jobs: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    created: list[str] = dataclasses.field(default_factory=list)
    deleted: list[str] = dataclasses.field(default_factory=list)
    events: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    fresh: dict[str, Any] | None = None

    def create_job(self, namespace: str, job: dict[str, Any]) -> dict[str, Any]:
        name = job["metadata"]["name"]
        if name in self.jobs:
            raise sync.JobExists(name)
        made = {**job, "metadata": {**job["metadata"], "uid": f"uid-{name}", "resourceVersion": "1"}}
        self.jobs[name] = made
        self.created.append(name)
        return made

    def get_job(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.jobs.get(name)

    def delete_job(self, namespace: str, name: str) -> None:
        self.jobs.pop(name)
        self.deleted.append(name)

    def get_cronjob(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.fresh

    def record(self, cronjob: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


def cronjob(created: str = "2026-01-07T10:10:05Z", **spec: Any) -> dict[str, Any]:
    status = spec.pop("status", {})
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "ns", "uid": "cj-uid", "creationTimestamp": created},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"metadata": {"labels": {"team": "a"}}, "spec": {"tasks": [{"name": "t", "replicas": 1}]}}, **spec},
        "status": status,
    }


def job(name: str, phase: str = "Running", created: str = "2026-01-07T10:10:00Z", finished: str = "") -> dict[str, Any]:
    state: dict[str, Any] = {"phase": phase}
    if finished:
        state["lastTransitionTime"] = finished
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "creationTimestamp": created, "ownerReferences": [{"kind": "CronJob", "name": "nightly", "uid": "cj-uid", "controller": True}]},
        "status": {"state": state},
    }


def active(*names: str) -> list[dict[str, Any]]:
    return [{"kind": "Job", "namespace": "ns", "name": n, "uid": f"uid-{n}", "apiVersion": "batch.volcano.sh/v1alpha1"} for n in names]


def run(cj: dict[str, Any], jobs: list[dict[str, Any]] = (), now: datetime.datetime = NOW) -> tuple[sync.Outcome, FakeCluster]:  # type: ignore[assignment]
    cluster = FakeCluster(jobs={j["metadata"]["name"]: j for j in jobs})
    return sync.CronJobSync(cluster, cj, list(jobs), now).run(), cluster


def reasons(cluster: FakeCluster) -> list[str]:
    return [reason for _, reason, _ in cluster.events]


MINUTE_1017 = "nightly-29463017"


def test_the_due_schedule_time_creates_a_job_named_annotated_and_owned() -> None:
    outcome, cluster = run(cronjob(timeZone="Asia/Shanghai"))
    assert cluster.created == [MINUTE_1017]
    made = cluster.jobs[MINUTE_1017]
    assert made["metadata"]["annotations"]["volcano.sh/cronjob-scheduled-timestamp"] == "2026-01-07T18:17:00+08:00"
    assert made["metadata"]["labels"] == {"team": "a"}
    assert made["metadata"]["ownerReferences"] == [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "CronJob", "name": "nightly", "uid": "cj-uid", "controller": True, "blockOwnerDeletion": True}]
    assert outcome.write_status and outcome.cronjob["status"]["lastScheduleTime"] == T_1017
    assert [ref["name"] for ref in outcome.cronjob["status"]["active"]] == [MINUTE_1017]
    assert reasons(cluster) == ["SuccessfulCreate"]
    assert outcome.requeue_s is not None and 30.0 <= outcome.requeue_s <= 30.2


def test_without_a_time_zone_the_annotation_is_utc() -> None:
    _, cluster = run(cronjob())
    assert cluster.jobs[MINUTE_1017]["metadata"]["annotations"]["volcano.sh/cronjob-scheduled-timestamp"] == T_1017


@pytest.mark.parametrize(
    ("cj", "why"),
    [
        (cronjob(created="2026-01-07T10:17:10Z"), "created after the last schedule time: the first is 10:18"),
        (cronjob(status={"lastScheduleTime": T_1017}), "10:17 was started already"),
        (cronjob(suspend=True), "suspended"),
        (cronjob(startingDeadlineSeconds=20), "10:17 is more than 20 s old"),
    ],
)
def test_nothing_starts(cj: dict[str, Any], why: str) -> None:
    outcome, cluster = run(cj)
    assert cluster.created == [], why


def test_forbid_skips_the_run_while_a_job_is_active() -> None:
    cj = cronjob(concurrencyPolicy="Forbid", status={"lastScheduleTime": T_1016, "active": active("nightly-old")})
    outcome, cluster = run(cj, [job("nightly-old")])
    assert cluster.created == [] and reasons(cluster) == ["ForbidConcurrent"]
    assert ("Warning", "ForbidConcurrent", "Skipping job creation because another job is already running") in cluster.events


def test_replace_deletes_the_active_job_and_starts_the_new_one() -> None:
    cj = cronjob(concurrencyPolicy="Replace", status={"lastScheduleTime": T_1016, "active": active("nightly-old")})
    outcome, cluster = run(cj, [job("nightly-old")])
    assert cluster.deleted == ["nightly-old"] and cluster.created == [MINUTE_1017]
    assert reasons(cluster) == ["ReplaceConcurrent", "SuccessfulDelete", "SuccessfulCreate"]
    assert ("Normal", "SuccessfulDelete", 'Deleted job "nightly-old"') in cluster.events
    assert [ref["name"] for ref in outcome.cronjob["status"]["active"]] == [MINUTE_1017]


def test_allow_starts_beside_the_active_job() -> None:
    cj = cronjob(status={"lastScheduleTime": T_1016, "active": active("nightly-old")})
    outcome, cluster = run(cj, [job("nightly-old")])
    assert [ref["name"] for ref in outcome.cronjob["status"]["active"]] == ["nightly-old", MINUTE_1017]


def test_a_finished_job_leaves_the_active_list_and_a_completed_one_sets_last_successful_time() -> None:
    cj = cronjob(status={"lastScheduleTime": T_1017, "active": active("nightly-a")})
    outcome, cluster = run(cj, [job("nightly-a", "Completed", finished="2026-01-07T10:17:12Z")])
    assert "active" not in outcome.cronjob["status"] and outcome.write_status
    assert outcome.cronjob["status"]["lastSuccessfulTime"] == "2026-01-07T10:17:12Z"
    assert ("Normal", "SawCompletedJob", "Saw completed job: nightly-a in active, remove") in cluster.events


def test_history_limits_delete_the_oldest_finished_jobs() -> None:
    jobs = [
        job("nightly-1", "Completed", created="2026-01-07T10:14:00Z"),
        job("nightly-2", "Completed", created="2026-01-07T10:15:00Z"),
        job("nightly-3", "Failed", created="2026-01-07T10:16:00Z"),
        job("nightly-4", "Failed", created="2026-01-07T10:17:00Z"),
    ]
    _, cluster = run(cronjob(successfulJobsHistoryLimit=1, failedJobsHistoryLimit=1, status={"lastScheduleTime": T_1017}), jobs)
    assert cluster.deleted == ["nightly-1", "nightly-3"]


def test_many_missed_times_warn_and_start_only_the_latest() -> None:
    _, cluster = run(cronjob(created="2026-01-07T07:00:00Z"))
    assert cluster.created == [MINUTE_1017]
    assert reasons(cluster) == ["TooManyMissedTimes", "SuccessfulCreate"]


def test_a_vanished_active_job_is_a_stale_reference() -> None:
    cj = cronjob(status={"lastScheduleTime": T_1017, "active": active("nightly-gone")})
    outcome, cluster = run(cj)
    assert "active" not in outcome.cronjob["status"]
    assert ("Warning", "StaleReference", 'Active job "nightly-gone" no longer exists (UID: uid-nightly-gone)') in cluster.events


def test_an_unlisted_running_job_is_orphaned() -> None:
    _, cluster = run(cronjob(status={"lastScheduleTime": T_1017}), [job("nightly-stray")])
    assert "OrphanedJob" in reasons(cluster)


def test_an_invalid_time_zone_is_reported_and_retried() -> None:
    with pytest.raises(sync.SyncError):
        run(cronjob(timeZone="Mars/Olympus"))


def test_a_schedule_that_never_fires_twice_is_an_invalid_schedule() -> None:
    cluster = FakeCluster()
    with pytest.raises(sync.SyncError):
        sync.CronJobSync(cluster, cronjob(schedule="0 0 31 2 *"), [], NOW).run()
    assert reasons(cluster) == ["InvalidSchedule"]
