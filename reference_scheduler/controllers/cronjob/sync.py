"""One sync of one CronJob: forget finished Jobs and trim their history, keep the active list
true, then start the Job of the schedule time that is due, as the concurrency policy allows.

Upstream: pkg/controllers/cronjob/cronjob_controller.go (syncCronJob) and
cronjob_controller_handler.go (processFinishedJobs, processCtlJobAndActiveJob, removeOldestJobs,
processConcurrencyPolicy, createJob); the Job's name, labels, annotations and owner are
getJobFromTemplate in cronjob_controller_util.go. Event reasons and messages are Volcano's.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import json
import logging
from typing import Any, Protocol

from reference_scheduler.controllers.cronjob import schedule as cron
from reference_scheduler.controllers.cronjob import times

log = logging.getLogger(__name__)
BATCH_API = "batch.volcano.sh/v1alpha1"
SCHEDULED_TIMESTAMP = "volcano.sh/cronjob-scheduled-timestamp"
FINISHED = ("Completed", "Failed", "Terminated")
NORMAL, WARNING = "Normal", "Warning"


class Cluster(Protocol):
    """What a sync asks of the API (the controller, or a test's fake)."""

    def create_job(self, namespace: str, job: dict[str, Any]) -> dict[str, Any]:
        """The created Job; raises JobExists or NamespaceTerminating, or another error."""
        ...

    def get_job(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def delete_job(self, namespace: str, name: str) -> None: ...

    def get_cronjob(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def record(self, cronjob: dict[str, Any], type_: str, reason: str, message: str) -> None: ...


class JobExists(Exception):
    pass


class NamespaceTerminating(Exception):
    pass


class SyncError(Exception):
    """The sync could not finish; it is tried again later, as upstream requeues with a backoff."""


@dataclasses.dataclass
class Outcome:
    """What a sync leaves: the CronJob with its new status, whether that status must be written,
    and when to look again (seconds; None: only on a change)."""

    cronjob: dict[str, Any]
    write_status: bool
    requeue_s: float | None


def controlled_by(job: dict[str, Any], cronjob: dict[str, Any]) -> bool:
    """Upstream: getJobsByCronJob, the Job's controller reference names this CronJob."""
    meta = cronjob["metadata"]
    ref = next((o for o in job["metadata"].get("ownerReferences") or [] if o.get("controller")), None)
    return ref is not None and ref.get("kind") == "CronJob" and ref.get("name") == meta["name"] and ref.get("uid") == meta.get("uid")


def _finished_phase(job: dict[str, Any]) -> str | None:
    phase = ((job.get("status") or {}).get("state") or {}).get("phase")
    return phase if phase in FINISHED else None


def _go_quote(text: str) -> str:
    """Go's %q of a plain string."""
    return json.dumps(text, ensure_ascii=False)


def job_name(cronjob: dict[str, Any], scheduled: datetime.datetime) -> str:
    """`<cronjob>-<scheduled time in minutes since the epoch>`: one name per schedule time, so a
    schedule time is never started twice."""
    return f"{cronjob['metadata']['name']}-{int(scheduled.timestamp()) // 60}"


def job_from_template(cronjob: dict[str, Any], scheduled: datetime.datetime) -> dict[str, Any]:
    spec = cronjob.get("spec") or {}
    template = spec.get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    zone = cron.load_location(spec.get("timeZone") or "")
    annotations = {**(template_meta.get("annotations") or {}), SCHEDULED_TIMESTAMP: scheduled.astimezone(zone).isoformat(timespec="seconds").replace("+00:00", "Z")}
    meta = cronjob["metadata"]
    return {
        "apiVersion": BATCH_API,
        "kind": "Job",
        "metadata": {
            "name": job_name(cronjob, scheduled),
            "namespace": meta["namespace"],
            "labels": dict(template_meta.get("labels") or {}),
            "annotations": annotations,
            "ownerReferences": [{"apiVersion": BATCH_API, "kind": "CronJob", "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def _ref(job: dict[str, Any]) -> dict[str, Any]:
    """The ObjectReference status.active keeps (client-go's reference.GetReference)."""
    meta = job["metadata"]
    return {"kind": "Job", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"], "apiVersion": BATCH_API, "resourceVersion": meta.get("resourceVersion", "")}


class CronJobSync:
    def __init__(self, cluster: Cluster, cronjob: dict[str, Any], jobs: list[dict[str, Any]], now: datetime.datetime) -> None:
        self.cluster = cluster
        self.cronjob = copy.deepcopy(cronjob)
        self.status: dict[str, Any] = self.cronjob.setdefault("status", {})
        self.jobs = [j for j in jobs if controlled_by(j, cronjob)]
        self.now = now
        self.changed = False

    # --- the active list ----------------------------------------------------------------------------
    @property
    def active(self) -> list[dict[str, Any]]:
        return list(self.status.get("active") or [])

    def _set_active(self, refs: list[dict[str, Any]]) -> None:
        if refs:
            self.status["active"] = refs
        else:
            self.status.pop("active", None)
        self.changed = True

    def _in_active(self, uid: str) -> bool:
        return any(ref.get("uid") == uid for ref in self.active)

    def _drop_active(self, uid: str) -> None:
        if self._in_active(uid):
            self._set_active([ref for ref in self.active if ref.get("uid") != uid])

    def _event(self, type_: str, reason: str, message: str) -> None:
        self.cluster.record(self.cronjob, type_, reason, message)

    # --- one sync -------------------------------------------------------------------------------------
    def run(self) -> Outcome:
        """Upstream: syncCronJob. Raises SyncError when it must be tried again."""
        self._finished_jobs()
        self._active_list()
        spec = self.cronjob.get("spec") or {}
        if spec.get("suspend"):
            return self._outcome(None)
        sched = self._schedule()
        try:
            due, many = times.next_due(self.cronjob, self.now, sched)
        except times.ScheduleTimeError as err:
            self._event(WARNING, "InvalidSchedule", f"Error getting schedule time: {err}")
            raise SyncError(str(err)) from err
        if many:
            self._event(WARNING, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
        later = times.seconds_until_next(self.cronjob, self.now, sched)
        if due is None:
            return self._outcome(later)
        name = job_name(self.cronjob, due)
        if any(ref.get("name") == name for ref in self.active) or self.status.get("lastScheduleTime") == times.format_time(due):
            return self._outcome(later)
        if not self._concurrency_allows():
            return self._outcome(later)
        job = self._create(due)
        if job is None or self._in_active(job["metadata"]["uid"]):
            return self._outcome(later)
        self._set_active([*self.active, _ref(job)])
        self.status["lastScheduleTime"] = times.format_time(due)
        return self._outcome(later)

    def _outcome(self, requeue_s: float | None) -> Outcome:
        return Outcome(self.cronjob, self.changed, requeue_s)

    def _schedule(self) -> cron.Schedule:
        """Upstream: validateTZandSchedule and formatSchedule. A schedule carrying its own TZ= wins
        over spec.timeZone (with a warning)."""
        spec = self.cronjob.get("spec") or {}
        zone = spec.get("timeZone")
        if zone is not None:
            try:
                cron.load_location(zone)
            except cron.ScheduleError as err:
                self._event(WARNING, "InvalidTimeZone", f"Invalid time zone {_go_quote(zone)}: {err}")
                raise SyncError(str(err)) from err
        text = str(spec.get("schedule") or "")
        if "TZ" in text:
            self._event(WARNING, "UnsupportedSchedule", f"CRON_TZ or TZ in the schedule {_go_quote(text)} is not officially supported. If set, the TimeZone field will be ignored during execution.")
        elif zone:
            text = f"TZ={zone} {text}"
        try:
            return cron.parse_standard(text)
        except cron.ScheduleError as err:
            raise SyncError(f"unparseable schedule {text!r}: {err}") from err

    # --- finished Jobs ------------------------------------------------------------------------------
    def _finished_jobs(self) -> None:
        """Upstream: processFinishedJobs. A finished Job leaves the active list; a Completed one
        moves lastSuccessfulTime; beyond the history limits the oldest finished Jobs are deleted."""
        succeeded, failed = [], []
        for job in self.jobs:
            phase = _finished_phase(job)
            if phase is None:
                continue
            if self._in_active(job["metadata"]["uid"]):
                self._drop_active(job["metadata"]["uid"])
                self._event(NORMAL, "SawCompletedJob", f"Saw completed job: {job['metadata']['name']} in active, remove")
            if phase == "Completed":
                finished_at = (job["status"].get("state") or {}).get("lastTransitionTime")
                last = times.parse_time(self.status.get("lastSuccessfulTime"))
                at = times.parse_time(finished_at)
                if at is not None and (last is None or at > last):
                    self.status["lastSuccessfulTime"] = times.format_time(at)
                    self.changed = True
                succeeded.append(job)
            elif phase == "Failed":
                failed.append(job)
        spec = self.cronjob.get("spec") or {}
        for kept, limit in ((succeeded, spec.get("successfulJobsHistoryLimit")), (failed, spec.get("failedJobsHistoryLimit"))):
            if limit is not None:
                self._remove_oldest(kept, int(limit))

    def _remove_oldest(self, jobs: list[dict[str, Any]], keep: int) -> None:
        excess = len(jobs) - keep
        if excess <= 0:
            return
        jobs = sorted(jobs, key=lambda j: (j["metadata"].get("creationTimestamp") or "~", j["metadata"]["name"]))
        for job in jobs[:excess]:
            self._delete(job)

    def _delete(self, job: dict[str, Any]) -> bool:
        """Upstream: deleteJobByClient."""
        meta = job["metadata"]
        try:
            self.cluster.delete_job(meta["namespace"], meta["name"])
        except Exception as err:
            self._event(WARNING, "FailedDelete", f"Error deleting job {_go_quote(meta['name'])}: {err}")
            return False
        self._drop_active(meta["uid"])
        self._event(NORMAL, "SuccessfulDelete", f"Deleted job {_go_quote(meta['name'])}")
        return True

    # --- the active list against the Jobs -----------------------------------------------------------
    def _active_list(self) -> None:
        """Upstream: processCtlJobAndActiveJob. A running Job this CronJob owns but does not list is
        reported as orphaned; a listed Job that is gone, or is another Job under the same name, is
        dropped from the list."""
        owned = {job["metadata"]["uid"] for job in self.jobs}
        for job in self.jobs:
            uid = job["metadata"]["uid"]
            if self._in_active(uid) or _finished_phase(job) is not None:
                continue
            fresh = self.cluster.get_cronjob(self.cronjob["metadata"]["namespace"], self.cronjob["metadata"]["name"])
            if fresh is not None and any(ref.get("uid") == uid for ref in (fresh.get("status") or {}).get("active") or []):
                continue
            self._event(WARNING, "OrphanedJob", f"Detected orphaned job forgotten or not managed by controller: {job['metadata']['name']} (UID: {uid})")
        for ref in self.active:
            if ref.get("uid") in owned:
                continue
            found = self.cluster.get_job(ref.get("namespace", ""), ref.get("name", ""))
            if found is None:
                self._event(WARNING, "StaleReference", f"Active job {_go_quote(ref.get('name', ''))} no longer exists (UID: {ref.get('uid', '')})")
                self._drop_active(ref.get("uid", ""))
            elif found["metadata"].get("uid") != ref.get("uid"):
                self._event(WARNING, "StaleReference", f"Active job reference {_go_quote(ref.get('name', ''))} points to a different UID (expected: {ref.get('uid', '')}, actual: {found['metadata'].get('uid')})")
                self._drop_active(ref.get("uid", ""))

    # --- concurrency and creation ------------------------------------------------------------------
    def _concurrency_allows(self) -> bool:
        """Upstream: processConcurrencyPolicy. Forbid skips this run while a Job is active; Replace
        deletes the active Jobs first; Allow (the default) starts it beside them."""
        policy = (self.cronjob.get("spec") or {}).get("concurrencyPolicy") or "Allow"
        if not self.active:
            return True
        if policy == "Forbid":
            self._event(WARNING, "ForbidConcurrent", "Skipping job creation because another job is already running")
            return False
        if policy == "Replace":
            self._event(WARNING, "ReplaceConcurrent", "Replacing active job for CronJob")
            for ref in self.active:
                job = self.cluster.get_job(ref.get("namespace", ""), ref.get("name", ""))
                if job is None:
                    self._event(WARNING, "FailedGet", f"Get job: jobs.batch.volcano.sh {_go_quote(ref.get('name', ''))} not found")
                    raise SyncError(f"active job {ref.get('name')} not found")
                if not self._delete(job):
                    raise SyncError(f"could not replace job {ref.get('namespace')}/{ref.get('name')}")
        return True

    def _create(self, scheduled: datetime.datetime) -> dict[str, Any] | None:
        """Upstream: createJob. A Job of this name that exists already is taken when this CronJob
        owns it and it still runs."""
        body = job_from_template(self.cronjob, scheduled)
        meta = self.cronjob["metadata"]
        try:
            job = self.cluster.create_job(meta["namespace"], body)
        except NamespaceTerminating as err:
            self._event(WARNING, "NamespaceTerminating", f"Namespace {meta['namespace']} is terminating, skipping job creation")
            raise SyncError(str(err)) from err
        except JobExists:
            existing = self.cluster.get_job(meta["namespace"], body["metadata"]["name"])
            if existing is None:
                raise SyncError(f"job {body['metadata']['name']} disappeared after creation conflict") from None
            if not controlled_by(existing, self.cronjob):
                owner = next((o.get("name") for o in existing["metadata"].get("ownerReferences") or [] if o.get("controller")), "none")
                self._event(WARNING, "ForeignJob", f"Job {existing['metadata']['name']} exists but is not owned by this CronJob (current owner: {owner})")
                return None
            return None if _finished_phase(existing) else existing
        except SyncError:
            raise
        except Exception as err:
            self._event(WARNING, "FailedCreate", f"Failed to create job: {err}")
            raise SyncError(str(err)) from err
        self._event(NORMAL, "SuccessfulCreate", f"Created job {job['metadata']['name']} for CronJob {meta['namespace']}/{meta['name']}")
        return job
