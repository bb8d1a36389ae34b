"""The CronJob controller's loop: which CronJobs to sync on a pass, the API calls a sync makes,
and when to wake for the next schedule time.

A CronJob is synced when it or one of its Jobs changed since its last sync, or when the time its
last sync asked to be woken at has come (the next schedule time, or a retry after an error with a
doubling backoff), as upstream's work queue requeues a key after a delay. It is never synced on a
plain periodic pass: a sync at a schedule time that stays unmet (Forbid) records an event each
time, as upstream's does.

Upstream: pkg/controllers/cronjob/cronjob_controller.go (sync, processNextReq).
"""

from __future__ import annotations

import collections
import datetime
import logging
import threading
import time
from typing import Any, cast

import kubernetes

from reference_scheduler.controllers import events
from reference_scheduler.controllers.cronjob import sync
from reference_scheduler.kube import informer

log = logging.getLogger(__name__)
BATCH = ("batch.volcano.sh", "v1alpha1")
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 300.0
# How many Jobs this controller deleted it remembers, so a pass that runs before the watch reports
# a deletion does not delete (and report) the same Job twice.
DELETED_MEMORY = 1000
Key = tuple[str, str]


class CronJobController:
    def __init__(self, api: kubernetes.client.ApiClient, changed: threading.Event, jobs: informer.Store) -> None:
        self.core = kubernetes.client.CoreV1Api(api)
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.cronjobs = informer.Store("cronjobs", informer.custom_lister(api, *BATCH, "cronjobs"), changed, optional=True)
        self.jobs = jobs
        # Per CronJob: what it and its Jobs looked like at its last sync, when to sync it again
        # regardless, and the current retry delay after errors.
        self._seen: dict[Key, tuple[Any, ...]] = {}
        self._due: dict[Key, float] = {}
        self._retry: dict[Key, float] = {}
        self._deleted: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.next_wake: float | None = None

    # --- sync.Cluster -----------------------------------------------------------------------------
    def create_job(self, namespace: str, job: dict[str, Any]) -> dict[str, Any]:
        try:
            created = cast(dict[str, Any], self.custom.create_namespaced_custom_object(*BATCH, namespace, "jobs", job))
        except kubernetes.client.ApiException as err:
            if err.status == 409:
                raise sync.JobExists(job["metadata"]["name"]) from err
            if err.status == 403 and "NamespaceTerminating" in (err.body or ""):
                raise sync.NamespaceTerminating(namespace) from err
            raise
        self.jobs.put(created)
        return created

    def get_job(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return cast(dict[str, Any], self.custom.get_namespaced_custom_object(*BATCH, namespace, "jobs", name))
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                return None
            raise

    def delete_job(self, namespace: str, name: str) -> None:
        job = self.jobs.get(namespace, name)
        self.custom.delete_namespaced_custom_object(*BATCH, namespace, "jobs", name)
        if job is not None:
            self._deleted[job["metadata"]["uid"]] = None
            while len(self._deleted) > DELETED_MEMORY:
                self._deleted.popitem(last=False)
        self.jobs.forget(namespace, name)

    def get_cronjob(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return cast(dict[str, Any], self.custom.get_namespaced_custom_object(*BATCH, namespace, "cronjobs", name))
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                return None
            raise

    def record(self, cronjob: dict[str, Any], type_: str, reason: str, message: str) -> None:
        events.record(self.core, cronjob, sync.BATCH_API, "CronJob", reason, message, type_)

    # --- the loop ------------------------------------------------------------------------------------
    def reconcile_all(self) -> None:
        now = time.time()
        by_owner: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for job in self.jobs.snapshot():
            if job["metadata"].get("uid") in self._deleted:
                continue
            for ref in job["metadata"].get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == "CronJob":
                    by_owner[ref.get("uid", "")].append(job)
        present: set[Key] = set()
        for cronjob in self.cronjobs.snapshot():
            meta = cronjob["metadata"]
            key = (meta["namespace"], meta["name"])
            present.add(key)
            if meta.get("deletionTimestamp"):
                continue
            jobs = by_owner.get(meta.get("uid", ""), [])
            seen = (meta.get("resourceVersion"), tuple(sorted((j["metadata"]["name"], j["metadata"].get("resourceVersion")) for j in jobs)))
            if seen == self._seen.get(key) and now < self._due.get(key, float("inf")):
                continue
            self._seen[key] = seen
            self._sync(key, cronjob, jobs, now)
        for key in set(self._seen) - present:
            self._seen.pop(key, None)
            self._due.pop(key, None)
            self._retry.pop(key, None)
        self.next_wake = min(self._due.values(), default=None)

    def _sync(self, key: Key, cronjob: dict[str, Any], jobs: list[dict[str, Any]], now: float) -> None:
        try:
            outcome = sync.CronJobSync(self, cronjob, jobs, datetime.datetime.fromtimestamp(now, datetime.timezone.utc)).run()
            if outcome.write_status:
                updated = self.custom.replace_namespaced_custom_object_status(*BATCH, key[0], "cronjobs", key[1], outcome.cronjob)
                self.cronjobs.put(cast(dict[str, Any], updated))
        except (sync.SyncError, kubernetes.client.ApiException) as err:
            delay = self._retry.get(key, RETRY_FIRST_S)
            self._retry[key] = min(RETRY_MAX_S, delay * 2)
            self._due[key] = now + delay
            status = getattr(err, "status", None)
            level = logging.DEBUG if status in (403, 404, 409) else logging.INFO
            log.log(level, "cronjob %s/%s: %s; again in %.0fs", key[0], key[1], err if status is None else f"HTTP {status}", delay)
            return
        self._retry.pop(key, None)
        if outcome.requeue_s is None:
            self._due.pop(key, None)
        else:
            self._due[key] = now + max(0.05, outcome.requeue_s)
