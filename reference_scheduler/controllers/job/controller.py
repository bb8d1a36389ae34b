"""The Job controller: level-triggered reconciliation of each Job from what the cluster holds.

For each Job: ensure its PodGroup; once the PodGroup has left Pending, ensure every pod of every
task exists (creating only missing ones, so a restart never duplicates a pod); write the Job's
status from its pods. Upstream: pkg/controllers/job/job_controller_actions.go, state/*.go.
"""

from __future__ import annotations

import datetime
import logging
import threading
from typing import Any

import kubernetes

from reference_scheduler.controllers.job import defaults, pods
from reference_scheduler.kube import informer

log = logging.getLogger(__name__)
BATCH = ("batch.volcano.sh", "v1alpha1")
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class JobController:
    def __init__(self, api: kubernetes.client.ApiClient) -> None:
        self.core = kubernetes.client.CoreV1Api(api)
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.changed = threading.Event()
        self.jobs = informer.Store("jobs", informer.custom_lister(api, *BATCH, "jobs"), self.changed)
        self.podgroups = informer.Store("podgroups", informer.custom_lister(api, *SCHEDULING, "podgroups"), self.changed)
        self.pods = informer.Store("pods", informer.core_lister(api, "pods"), self.changed)

    def start(self, timeout_s: float = 60.0) -> None:
        for store in (self.jobs, self.podgroups, self.pods):
            store.start()
        for store in (self.jobs, self.podgroups, self.pods):
            if not store.synced.wait(timeout_s):
                raise TimeoutError(f"the {store.name} cache did not sync within {timeout_s:.0f}s")

    def reconcile_all(self) -> None:
        by_job: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for pod in self.pods.snapshot():
            labels = pod["metadata"].get("labels") or {}
            if pods.JOB_NAME in labels:
                by_job.setdefault((pod["metadata"]["namespace"], labels[pods.JOB_NAME]), []).append(pod)
        for job in self.jobs.snapshot():
            if job["metadata"].get("deletionTimestamp"):
                continue
            try:
                self.reconcile(defaults.with_defaults(job), by_job.get((job["metadata"]["namespace"], job["metadata"]["name"]), []))
            except kubernetes.client.ApiException as err:
                log.warning("job %s/%s: %s %s", job["metadata"]["namespace"], job["metadata"]["name"], err.status, err.reason)

    def reconcile(self, job: dict[str, Any], job_pods: list[dict[str, Any]]) -> None:
        meta = job["metadata"]
        pg = self.podgroups.get(meta["namespace"], pods.podgroup_name(job))
        if pg is None:
            pg = self._create_podgroup(job)
        phase = (pg.get("status") or {}).get("phase") or "Pending"
        if phase != "Pending":
            self._sync_pods(job, job_pods)
        self._write_status(job, job_pods)

    def _create_podgroup(self, job: dict[str, Any]) -> dict[str, Any]:
        meta, spec = job["metadata"], job["spec"]
        body = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": pods.podgroup_name(job), "namespace": meta["namespace"], "ownerReferences": [pods.owner(job)], "annotations": {pods.JOB_NAME: meta["name"]}},
            "spec": {
                "minMember": int(spec["minAvailable"]),
                "minTaskMember": {t["name"]: int(t["minAvailable"]) for t in spec.get("tasks") or []},
                "queue": spec["queue"],
                "minResources": pods.min_resources(job),
            },
        }
        if spec.get("priorityClassName"):
            body["spec"]["priorityClassName"] = spec["priorityClassName"]
        try:
            created = self.custom.create_namespaced_custom_object(*SCHEDULING, meta["namespace"], "podgroups", body)
        except kubernetes.client.ApiException as err:
            if err.status != 409:
                raise
            created = self.custom.get_namespaced_custom_object(*SCHEDULING, meta["namespace"], "podgroups", body["metadata"]["name"])
        self.podgroups.put(created)
        return created

    def _sync_pods(self, job: dict[str, Any], job_pods: list[dict[str, Any]]) -> None:
        existing = {p["metadata"]["name"] for p in job_pods}
        for task in job["spec"].get("tasks") or []:
            for index in range(int(task.get("replicas", 0))):
                name = pods.pod_name(job["metadata"]["name"], task["name"], index)
                if name in existing:
                    continue
                try:
                    created = self.core.create_namespaced_pod(job["metadata"]["namespace"], pods.make_pod(job, task, index), _preload_content=False)
                    log.debug("created pod %s (%s)", name, created.status)
                except kubernetes.client.ApiException as err:
                    if err.status != 409:
                        raise

    def _write_status(self, job: dict[str, Any], job_pods: list[dict[str, Any]]) -> None:
        counts = {"pending": 0, "running": 0, "succeeded": 0, "failed": 0, "terminating": 0, "unknown": 0}
        per_task: dict[str, dict[str, int]] = {}
        for pod in job_pods:
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            key = "terminating" if pod["metadata"].get("deletionTimestamp") else phase.lower()
            counts[key if key in counts else "unknown"] += 1
            task = (pod["metadata"].get("labels") or {}).get(pods.TASK_SPEC, "")
            per_task.setdefault(task, {}).setdefault(phase, 0)
            per_task[task][phase] += 1
        spec = job["spec"]
        status = dict(job.get("status") or {})
        old_phase = (status.get("state") or {}).get("phase") or ""
        total = sum(int(t.get("replicas", 0)) for t in spec.get("tasks") or [])
        min_available = int(spec["minAvailable"])
        finished = counts["succeeded"] + counts["failed"]
        phase = old_phase or "Pending"
        if phase in ("Pending", "Running"):
            if spec.get("minSuccess") and counts["succeeded"] >= int(spec["minSuccess"]):
                phase = "Completed"
            elif total and finished == total and len(job_pods) >= total:
                phase = "Completed" if counts["succeeded"] >= min_available else "Failed"
            elif counts["running"] + counts["succeeded"] >= min_available and min_available > 0:
                phase = "Running"
        new = {
            **status,
            **counts,
            "minAvailable": min_available,
            "taskStatusCount": {t: {"phase": c} for t, c in sorted(per_task.items())},
            "state": dict(status.get("state") or {}, phase=phase),
        }
        if phase != old_phase:
            new["state"]["lastTransitionTime"] = _now()
            new["conditions"] = list(status.get("conditions") or []) + [{"status": phase, "lastTransitionTime": _now()}]
        if new == status:
            return
        updated = self.custom.patch_namespaced_custom_object_status(*BATCH, job["metadata"]["namespace"], "jobs", job["metadata"]["name"], {"status": new})
        self.jobs.put(updated)
