"""The JobFlow and JobTemplate controllers' loop.

A JobFlow is synced when it is first seen and whenever one of its Jobs changes, and (with
jobRetainPolicy delete) when it changed after succeeding: the moments upstream's handlers queue
it (addJobFlow, updateJob, updateJobFlow). A sync that fails (a JobTemplate missing) is tried again
after a doubling delay. A JobTemplate's status is brought in line with the Jobs made from it on
every pass.

Upstream: pkg/controllers/jobflow/jobflow_controller.go and jobflow_controller_handler.go,
pkg/controllers/jobtemplate/.
"""

from __future__ import annotations

import collections
import copy
import logging
import threading
import time
from typing import Any, cast

import kubernetes

from reference_scheduler.controllers import events
from reference_scheduler.controllers.jobflow import flow, template
from reference_scheduler.kube import informer

log = logging.getLogger(__name__)
FLOW = ("flow.volcano.sh", "v1alpha1")
BATCH = ("batch.volcano.sh", "v1alpha1")
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 300.0
Key = tuple[str, str]


class JobFlowController:
    def __init__(self, api: kubernetes.client.ApiClient, changed: threading.Event, jobs: informer.Store) -> None:
        self.core = kubernetes.client.CoreV1Api(api)
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.jobflows = informer.Store("jobflows", informer.custom_lister(api, *FLOW, "jobflows"), changed, optional=True)
        self.templates = informer.Store("jobtemplates", informer.custom_lister(api, *FLOW, "jobtemplates"), changed, optional=True)
        self.jobs = jobs
        self._seen: dict[Key, tuple[Any, ...]] = {}
        self._due: dict[Key, float] = {}
        self._retry: dict[Key, float] = {}
        self.next_wake: float | None = None

    def stores(self) -> tuple[informer.Store, ...]:
        return (self.jobflows, self.templates)

    # --- flow.Cluster -------------------------------------------------------------------------------
    def template(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.templates.get(namespace, name)

    def create_job(self, namespace: str, job: dict[str, Any]) -> bool:
        try:
            created = self.custom.create_namespaced_custom_object(*BATCH, namespace, "jobs", job)
        except kubernetes.client.ApiException as err:
            if err.status == 409:
                return False
            raise
        self.jobs.put(cast(dict[str, Any], created))
        return True

    def delete_job(self, namespace: str, name: str) -> None:
        try:
            self.custom.delete_namespaced_custom_object(*BATCH, namespace, "jobs", name)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
        self.jobs.forget(namespace, name)

    def record(self, jobflow: dict[str, Any], type_: str, reason: str, message: str) -> None:
        events.record(self.core, jobflow, flow.FLOW_API, "JobFlow", reason, message, type_)

    # --- the loop -------------------------------------------------------------------------------------
    def reconcile_all(self) -> None:
        now = time.time()
        by_namespace: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for job in self.jobs.snapshot():
            by_namespace[job["metadata"]["namespace"]].append(job)
        present: set[Key] = set()
        for jobflow in self.jobflows.snapshot():
            meta = jobflow["metadata"]
            key = (meta["namespace"], meta["name"])
            present.add(key)
            if meta.get("deletionTimestamp"):
                continue
            mark = flow.object_string(*key)
            jobs = [j for j in by_namespace.get(key[0], []) if (j["metadata"].get("labels") or {}).get(flow.CREATED_BY_FLOW) == mark]
            succeeded_to_delete = ((jobflow.get("status") or {}).get("state") or {}).get("phase") == "Succeed" and (jobflow.get("spec") or {}).get("jobRetainPolicy") == "delete"
            seen = (tuple(sorted((j["metadata"]["name"], j["metadata"].get("resourceVersion")) for j in jobs)), meta.get("resourceVersion") if succeeded_to_delete else None)
            if seen == self._seen.get(key) and now < self._due.get(key, float("inf")):
                continue
            self._seen[key] = seen
            self._sync(key, jobflow, jobs, now)
        for key in set(self._seen) - present:
            self._seen.pop(key, None)
            self._due.pop(key, None)
            self._retry.pop(key, None)
        self.next_wake = min(self._due.values(), default=None)
        self._templates(by_namespace)

    def _sync(self, key: Key, jobflow: dict[str, Any], jobs: list[dict[str, Any]], now: float) -> None:
        try:
            outcome = flow.JobFlowSync(self, jobflow, jobs).run()
            if outcome.status is not None:
                body = {**copy.deepcopy(jobflow), "status": outcome.status}
                self.jobflows.put(cast(dict[str, Any], self.custom.replace_namespaced_custom_object_status(*FLOW, key[0], "jobflows", key[1], body)))
        except (flow.MissingTemplate, kubernetes.client.ApiException) as err:
            delay = self._retry.get(key, RETRY_FIRST_S)
            self._retry[key] = min(RETRY_MAX_S, delay * 2)
            self._due[key] = now + delay
            log.info("jobflow %s/%s: %s; again in %.0fs", key[0], key[1], err if not isinstance(err, kubernetes.client.ApiException) else f"HTTP {err.status}", delay)
            return
        self._retry.pop(key, None)
        self._due.pop(key, None)

    def _templates(self, by_namespace: dict[str, list[dict[str, Any]]]) -> None:
        for jt in self.templates.snapshot():
            meta = jt["metadata"]
            names = template.depends_on_list(jt, by_namespace.get(meta["namespace"], []))
            if names is None or meta.get("deletionTimestamp"):
                continue
            try:
                body = {**copy.deepcopy(jt), "status": {**(jt.get("status") or {}), "jobDependsOnList": names}}
                self.templates.put(cast(dict[str, Any], self.custom.replace_namespaced_custom_object_status(*FLOW, meta["namespace"], "jobtemplates", meta["name"], body)))
            except kubernetes.client.ApiException as err:
                log.debug("jobtemplate %s/%s: HTTP %s", meta["namespace"], meta["name"], err.status)
