"""One sync of one JobFlow: create the Job of every flow whose targets' Jobs have completed, read
the Jobs' phases into the JobFlow's status, and move its phase; once it succeeded, a JobFlow with
jobRetainPolicy delete deletes its Jobs.

Upstream: pkg/controllers/jobflow/jobflow_controller_action.go (syncJobFlow, deployJob, judge,
createJob, getAllJobStatus, getRunningHistories, loadJobTemplateAndSetJob,
deleteAllJobsCreatedByJobFlow) and state/*.go (the phase rules). A flow's dependsOn probe is part
of the API but v1.13's controller reads only its targets; so does this one.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any, Protocol

from reference_scheduler.controllers.job.clock import now_rfc3339

FLOW_API = "flow.volcano.sh/v1alpha1"
BATCH_API = "batch.volcano.sh/v1alpha1"
CREATED_BY_TEMPLATE = "volcano.sh/createdByJobTemplate"
CREATED_BY_FLOW = "volcano.sh/createdByJobFlow"
# Job phases the status lists by name; any other phase (Aborted, Restarting, ...) is "unknown".
LISTED = {"Pending": "pendingJobs", "Running": "runningJobs", "Failed": "failedJobs", "Completed": "completedJobs", "Terminated": "terminatedJobs"}
# Counted, but listed nowhere: upstream keeps them apart from the unknown ones.
UNLISTED = ("Completing", "Terminating")


class Cluster(Protocol):
    def template(self, namespace: str, name: str) -> dict[str, Any] | None: ...

    def create_job(self, namespace: str, job: dict[str, Any]) -> bool:
        """True when created, False when it existed already."""
        ...

    def delete_job(self, namespace: str, name: str) -> None: ...

    def record(self, jobflow: dict[str, Any], type_: str, reason: str, message: str) -> None: ...


class MissingTemplate(Exception):
    pass


def object_string(namespace: str, name: str) -> str:
    """`<namespace>.<name>`: the value of the created-by labels and annotations."""
    return f"{namespace}.{name}"


def job_name(jobflow: dict[str, Any], flow_name: str) -> str:
    return f"{jobflow['metadata']['name']}-{flow_name}"


def job_from_template(jobflow: dict[str, Any], flow_name: str, template: dict[str, Any]) -> dict[str, Any]:
    meta = jobflow["metadata"]
    marks = {CREATED_BY_TEMPLATE: object_string(meta["namespace"], flow_name), CREATED_BY_FLOW: object_string(meta["namespace"], meta["name"])}
    return {
        "apiVersion": BATCH_API,
        "kind": "Job",
        "metadata": {
            "name": job_name(jobflow, flow_name),
            "namespace": meta["namespace"],
            "labels": dict(marks),
            "annotations": dict(marks),
            "ownerReferences": [{"apiVersion": FLOW_API, "kind": "JobFlow", "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def _phase(job: dict[str, Any]) -> str:
    return str(((job.get("status") or {}).get("state") or {}).get("phase") or "")


@dataclasses.dataclass
class Outcome:
    status: dict[str, Any] | None  # the new status to write, None: nothing to write


class JobFlowSync:
    def __init__(self, cluster: Cluster, jobflow: dict[str, Any], jobs: list[dict[str, Any]]) -> None:
        self.cluster = cluster
        self.jobflow = jobflow
        self.meta = jobflow["metadata"]
        mark = object_string(self.meta["namespace"], self.meta["name"])
        self.jobs = {j["metadata"]["name"]: j for j in jobs if (j["metadata"].get("labels") or {}).get(CREATED_BY_FLOW) == mark}
        self.flows = list((jobflow.get("spec") or {}).get("flows") or [])
        self.old_status = jobflow.get("status") or {}
        self.phase = str((self.old_status.get("state") or {}).get("phase") or "")

    def run(self) -> Outcome:
        """Upstream: NewState(jobFlow).Execute(SyncJobFlowAction). Failed and Terminating flows are
        left alone."""
        if self.phase in ("Failed", "Terminating"):
            return Outcome(None)
        if self.phase == "Succeed" and (self.jobflow.get("spec") or {}).get("jobRetainPolicy") == "delete":
            for name in sorted(self.jobs):
                self.cluster.delete_job(self.meta["namespace"], name)
            return Outcome(None)
        self._deploy()
        status = self._status()
        status["state"] = {"phase": self._next_phase(status)}
        return Outcome(status if _comparable(status) != _comparable(self.old_status) else None)

    # --- Jobs in dependency order -------------------------------------------------------------------
    def _deploy(self) -> None:
        """Upstream: deployJob. A flow without targets starts at once; one with targets once every
        target's Job exists and is Completed. Jobs created here are counted from the next sync,
        when the cache has them."""
        for flow in self.flows:
            name = str(flow.get("name", ""))
            if job_name(self.jobflow, name) in self.jobs:
                continue
            targets = (flow.get("dependsOn") or {}).get("targets")
            if targets and not all(_phase(self.jobs.get(job_name(self.jobflow, t), {})) == "Completed" for t in targets):
                continue
            template = self.cluster.template(self.meta["namespace"], name)
            if template is None:
                raise MissingTemplate(f'jobtemplate.flow.volcano.sh "{name}" not found')
            if self.cluster.create_job(self.meta["namespace"], job_from_template(self.jobflow, name, template)):
                self.cluster.record(self.jobflow, "Normal", "Created", f"create a job named {job_name(self.jobflow, name)}!")

    # --- status ------------------------------------------------------------------------------------
    def _status(self) -> dict[str, Any]:
        """Upstream: getAllJobStatus: the Jobs by phase, a condition per Job, and per Job its
        start, end, restarts and the phases it went through (kept from the previous status)."""
        lists: dict[str, list[str]] = {key: [] for key in LISTED.values()}
        unknown: list[str] = []
        conditions: dict[str, Any] = {}
        for name, job in sorted(self.jobs.items()):
            phase = _phase(job)
            if phase in LISTED:
                lists[LISTED[phase]].append(name)
            elif phase not in UNLISTED:
                unknown.append(name)
            js = job.get("status") or {}
            conditions[name] = {k: v for k, v in (("phase", phase), ("createTime", job["metadata"].get("creationTimestamp")), ("runningDuration", js.get("runningDuration")), ("taskStatusCount", js.get("taskStatusCount"))) if v}
        # The previous list in its order, each Job's entry renewed, new Jobs at the end; entries
        # of Jobs gone since stay, as upstream keeps the old list.
        entries = {str(entry.get("name")): entry for entry in self.old_status.get("jobStatusList") or []}
        for name, job in sorted(self.jobs.items()):
            entry = {"name": name, "state": _phase(job), "startTimestamp": job["metadata"].get("creationTimestamp")}
            retries = int((job.get("status") or {}).get("retryCount") or 0)
            if retries:
                entry["restartCount"] = retries
            histories = self._histories(entries.get(name), _phase(job))
            if histories:
                entry["runningHistories"] = histories
            entries[name] = {k: v for k, v in entry.items() if v not in (None, "")}
        status: dict[str, Any] = {key: value for key, value in lists.items() if value}
        if unknown:
            status["unKnowJobs"] = unknown
        if entries:
            status["jobStatusList"] = list(entries.values())
        if conditions:
            status["conditions"] = conditions
        return status

    @staticmethod
    def _histories(previous: dict[str, Any] | None, phase: str) -> list[dict[str, Any]]:
        """Upstream: getRunningHistories: a new entry each time the Job's phase changes."""
        histories = [dict(h) for h in (previous or {}).get("runningHistories") or []]
        if not histories:
            return [{"startTimestamp": now_rfc3339(), "state": phase}] if phase else []
        if histories[-1].get("state") != phase:
            histories[-1]["endTimestamp"] = now_rfc3339()
            histories.append({"startTimestamp": now_rfc3339(), "state": phase})
        return histories

    def _next_phase(self, status: dict[str, Any]) -> str:
        """Upstream: state/pending.go and state/running.go. Pending becomes Running once a Job runs
        or completed and none failed, or Failed once one failed or was terminated; Running becomes
        Succeed when every flow's Job completed, or Failed when one failed."""
        running, completed = len(status.get("runningJobs", [])), len(status.get("completedJobs", []))
        failed, terminated = len(status.get("failedJobs", [])), len(status.get("terminatedJobs", []))
        if self.phase in ("", "Pending"):
            if (running or completed) and not failed:
                return "Running"
            if failed or terminated:
                return "Failed"
            return "Pending"
        if self.phase == "Running":
            if completed == len(self.flows):
                return "Succeed"
            if failed:
                return "Failed"
        return self.phase


def _comparable(status: dict[str, Any]) -> str:
    """A status without the history timestamps, to tell whether anything really changed."""
    plain = copy.deepcopy(status)
    for entry in plain.get("jobStatusList") or []:
        for history in entry.get("runningHistories") or []:
            history.pop("startTimestamp", None)
            history.pop("endTimestamp", None)
    return json.dumps(plain, sort_keys=True)
