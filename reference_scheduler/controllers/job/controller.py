"""The Job controller: level-triggered and restart-safe.

Every change (and a periodic resync) reconciles each Job from what the cluster holds. This module
is the loop around the per-job work: the informers (jobs, PodGroups, pods, bus Commands,
PriorityClasses), grouping pods, Commands and evictions by job, one `sync.JobSync` per job and
pass, the wake-up time for policy timeouts and TTLs, and the Events it records. The memory kept
between passes (edge events already handled, evictions seen on the watch) lives here too, since a
sync lasts one pass; what a sync does with the job (events, policies, the phase machine, pods,
PodGroup, plugin objects, status) is sync.py.

Upstream: pkg/controllers/job/job_controller.go (informers, queueing), job_controller_handler.go
(pod deletions, Commands).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import kubernetes

from reference_scheduler.controllers import events
from reference_scheduler.controllers.job import defaults, owned, pods, policies
from reference_scheduler.controllers.job.features import FULL, Features
from reference_scheduler.controllers.job.groups import BATCH, BUS, SCHEDULING
from reference_scheduler.controllers.job.sync import Evicted, JobSync
from reference_scheduler.kube import informer

log = logging.getLogger(__name__)
JOB_ACTIONS = ("AbortJob", "RestartJob", "ResumeJob", "CompleteJob", "TerminateJob")


class JobController:
    def __init__(self, api: kubernetes.client.ApiClient, features: Features = FULL) -> None:
        self.features = features
        self.core = kubernetes.client.CoreV1Api(api)
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.owned = owned.OwnedObjects(api)
        self.changed = threading.Event()
        self.jobs = informer.Store("jobs", informer.custom_lister(api, *BATCH, "jobs"), self.changed)
        self.podgroups = informer.Store("podgroups", informer.custom_lister(api, *SCHEDULING, "podgroups"), self.changed)
        self.pods = informer.Store("pods", informer.core_lister(api, "pods"), self.changed, on_delete=self._pod_deleted)
        self.commands = informer.Store("commands", informer.custom_lister(api, *BUS, "commands"), self.changed)
        # Task priorities order the pods a PodGroup's minResources counts.
        self.priority_classes = informer.Store("priorityclasses", informer.core_lister(api, "priorityclasses"), self.changed)
        self._lock = threading.Lock()
        self._evicted: list[Evicted] = []
        # Pods this controller deleted (their deletion is not an eviction).
        self._our_deletions: set[str] = set()
        # Edge events already acted on, by identity; lost on restart, which only re-raises events
        # whose action the persisted status already reflects.
        self._handled: set[str] = set()
        # Jobs given their first pass (a plain sync) since this controller started.
        self._synced: set[str] = set()
        self._pg_phase_seen: dict[str, str] = {}
        self._pg_pending_reported: dict[str, str] = {}
        self._replay: dict[str, tuple[str, policies.Request | None]] = {}
        # Plugin objects ensured per job, by a hash of the job's spec.
        self._ensured: dict[str, str] = {}
        self._released: set[str] = set()
        self.next_wake: float | None = None

    def stores(self) -> tuple[informer.Store, ...]:
        return (self.jobs, self.podgroups, self.pods, self.commands, self.priority_classes)

    def start(self, timeout_s: float = 60.0) -> None:
        for store in self.stores():
            store.start()
        for store in self.stores():
            if not store.synced.wait(timeout_s):
                raise TimeoutError(f"the {store.name} cache did not sync within {timeout_s:.0f}s")

    # --- events from the watch -------------------------------------------------------------------
    def _pod_deleted(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        annotations = meta.get("annotations") or {}
        with self._lock:
            if meta.get("uid") in self._our_deletions:
                self._our_deletions.discard(meta["uid"])
                return
            if pods.JOB_NAME not in annotations:
                return
            self._evicted.append(Evicted(meta["namespace"], annotations[pods.JOB_NAME], annotations.get(pods.TASK_SPEC, ""), meta["name"], int(annotations.get(pods.JOB_VERSION, "0")), time.time()))

    # --- the loop ------------------------------------------------------------------------------------
    def reconcile_all(self) -> None:
        self.next_wake = None
        by_job: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for pod in self.pods.snapshot():
            annotations = pod["metadata"].get("annotations") or {}
            if pods.JOB_NAME in annotations:
                by_job.setdefault((pod["metadata"]["namespace"], annotations[pods.JOB_NAME]), []).append(pod)
        commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for cmd in self.commands.snapshot():
            target = cmd.get("target") or {}
            if target.get("kind") == "Job" and cmd.get("action") in JOB_ACTIONS:
                commands.setdefault((cmd["metadata"]["namespace"], target.get("name", "")), []).append(cmd)
        with self._lock:
            evicted = list(self._evicted)
        evicted_by_job: dict[tuple[str, str], list[Evicted]] = {}
        for e in evicted:
            evicted_by_job.setdefault((e.namespace, e.job), []).append(e)
        jobs = self.jobs.snapshot()
        live = {raw["metadata"]["uid"] for raw in jobs}
        for uid in [uid for uid in self._replay if uid not in live]:
            del self._replay[uid]
        for raw in jobs:
            meta = raw["metadata"]
            key = (meta["namespace"], meta["name"])
            if meta.get("deletionTimestamp"):
                continue
            sync = JobSync(self, defaults.with_defaults(raw), by_job.get(key, []), commands.get(key, []), evicted_by_job.get(key, []))
            try:
                sync.run()
            except kubernetes.client.ApiException as err:
                # 403 while a namespace terminates and 404/409 after a concurrent change are
                # ordinary; the next pass sees the new state, and takes again an action this
                # pass had consumed (a Command already deleted, an event already marked handled).
                if sync.consumed is not None:
                    self._replay[meta["uid"]] = sync.consumed
                level = logging.DEBUG if err.status in (403, 404, 409) else logging.WARNING
                log.log(level, "job %s/%s: HTTP %s %s", meta["namespace"], meta["name"], err.status, (err.body or err.reason or "")[:300])
                self.wake_at(time.time() + 1.0)

    def wake_at(self, when: float) -> None:
        if self.next_wake is None or when < self.next_wake:
            self.next_wake = when

    def record_event(self, job: dict[str, Any], reason: str, message: str, type_: str = "Normal") -> None:
        events.record(self.core, job, "batch.volcano.sh/v1alpha1", "Job", reason, message, type_)
