"""One reconciliation of one Job, the operations the phase machine (states.py) drives.

A sync reads the Job's status (phase, version, retryCount: the controller's memory, written to the
API), its PodGroup and its pods, derives the job's events (a pod failed, was evicted, a task
completed, the PodGroup went Unknown, a pod pending too long, a bus Command), picks the action its
policies give (task policies first), and lets the phase machine act: create the missing pods, kill
pods, move the phase. Pods are only ever created under their fixed names, so a restart never
duplicates one; pods of an older job version never raise events. controller.py gives each Job a
sync on every pass; what a sync needs of it is `Controller` below, so this module never imports
the controller.

Upstream: pkg/controllers/job/job_controller_actions.go (killJob, syncJob), job_controller_util.go
(applyPolicies), pkg/controllers/garbagecollector/ (TTL after finishing).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from typing import Any, Protocol, cast

import kubernetes

from reference_scheduler.controllers.job import (
    dependson,
    owned,
    pods,
    policies,
    states,
    volumes,
)
from reference_scheduler.controllers.job.clock import now_rfc3339, parse_time
from reference_scheduler.controllers.job.features import Features
from reference_scheduler.controllers.job.groups import BATCH, BUS, SCHEDULING
from reference_scheduler.controllers.job.plugins import factory
from reference_scheduler.kube import client, informer

FINAL_PHASES = ("Completed", "Failed", "Terminated")
# Phases after which a job's PodGroup and plugin objects are released.
RELEASED_PHASES = ("Completed", "Failed", "Terminated", "Aborted")


@dataclasses.dataclass(frozen=True)
class Evicted:
    """A job's pod the watch saw deleted by someone else: a PodEvicted event for the job's next
    syncs, kept by the controller until handled or stale (the job moved to a new version)."""

    namespace: str
    job: str
    task: str
    pod: str
    version: int
    at: float


class Controller(Protocol):
    """What a sync uses of the controller that runs it: the API clients, the caches, and the
    memory kept between passes (edge events handled, evictions queued, objects ensured), which a
    sync reads and updates in place. controller.JobController is the one implementation; a test
    can hand in its own."""

    features: Features
    core: kubernetes.client.CoreV1Api
    custom: kubernetes.client.CustomObjectsApi
    owned: owned.OwnedObjects
    jobs: informer.Store
    podgroups: informer.Store
    commands: informer.Store
    priority_classes: informer.Store
    _lock: threading.Lock
    _evicted: list[Evicted]
    _our_deletions: set[str]
    _handled: set[str]
    _synced: set[str]
    _pg_phase_seen: dict[str, str]
    # Per PodGroup uid, the PodGroupPending message last recorded on its Job.
    _pg_pending_reported: dict[str, str]
    # Per Job uid, an action a pass took (a Command, a policy's event) whose pass then failed:
    # the next pass takes it again, as upstream requeues the request on an error.
    _replay: dict[str, tuple[str, policies.Request | None]]
    _ensured: dict[str, str]
    _released: set[str]

    def wake_at(self, when: float) -> None: ...

    def record_event(self, job: dict[str, Any], reason: str, message: str, type_: str = "Normal") -> None: ...


class JobSync:
    """One reconciliation of one Job: the `Ops` the phase machine drives."""

    def __init__(self, ctl: Controller, job: dict[str, Any], job_pods: list[dict[str, Any]], commands: list[dict[str, Any]], evicted: list[Evicted]) -> None:
        self.ctl = ctl
        self.job = job
        self.meta = job["metadata"]
        self.status = self._initial_status(job)
        self.pods = {p["metadata"]["name"]: p for p in job_pods}
        self.commands = commands
        self.evicted = evicted
        self.pg = ctl.podgroups.get(self.meta["namespace"], pods.podgroup_name(job))
        self.plugins = factory.build(job["spec"].get("plugins")) if ctl.features.job_plugins else []
        # The action this pass took (not a plain sync), for the controller to take again should
        # the pass fail after it was consumed.
        self.consumed: tuple[str, policies.Request | None] | None = None

    @staticmethod
    def _initial_status(job: dict[str, Any]) -> dict[str, Any]:
        status: dict[str, Any] = json.loads(json.dumps(job.get("status") or {}))
        status.setdefault("state", {})
        status["state"].setdefault("phase", "")
        status.setdefault("version", 0)
        status.setdefault("retryCount", 0)
        status["minAvailable"] = int(job["spec"]["minAvailable"])
        return status

    @property
    def version(self) -> int:
        return int(self.status.get("version", 0))

    @property
    def phase(self) -> str:
        return self.status["state"].get("phase") or ""

    # --- one pass ----------------------------------------------------------------------------------
    def run(self) -> None:
        if self.phase == "":
            # A new job: the first status says Pending; nothing else happens until it is written.
            self.status["state"]["phase"] = "Pending"
            self._write_status(transition=True)
            return
        if self.ctl.features.ttl and self._ttl_expired():
            return
        action, req = self._choose_action()
        self._prune_evictions()
        if action != policies.SYNC:
            self.consumed = (action, req)
            self.ctl.record_event(self.job, "ExecuteAction", f"Start to execute action {action} ")
        states.execute(self, self.phase, action, req.task if req else "", req.pod if req else "")

    def _ttl_expired(self) -> bool:
        ttl = self.job["spec"].get("ttlSecondsAfterFinished")
        if ttl is None or self.phase not in FINAL_PHASES:
            return False
        finished = parse_time(self.status["state"].get("lastTransitionTime"))
        if finished is None:
            return False
        due = finished + int(ttl)
        if time.time() < due:
            self.ctl.wake_at(due)
            return False
        try:
            self.ctl.custom.delete_namespaced_custom_object(*BATCH, self.meta["namespace"], "jobs", self.meta["name"], body=client.as_body({"propagationPolicy": "Foreground"}))
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
        return True

    # --- events and policies -------------------------------------------------------------------
    @staticmethod
    def _eviction_id(e: Evicted) -> str:
        return f"{e.pod}/{e.at}/PodEvicted"

    def _prune_evictions(self) -> None:
        """Evictions stay queued while a policy's timeout runs; handled or stale ones go."""
        done = {e for e in self.evicted if e.version != self.version or self._eviction_id(e) in self.ctl._handled}
        if done:
            with self.ctl._lock:
                self.ctl._evicted = [e for e in self.ctl._evicted if e not in done]

    def _requests(self) -> list[tuple[str | None, policies.Request]]:
        """The job's current events, each with the identity that makes it fire once (None: a
        condition that holds while it lasts, such as a pod pending too long)."""
        out: list[tuple[str | None, policies.Request]] = []
        uid = self.meta["uid"]
        succeeded_by_task: dict[str, int] = {}
        for pod in self.pods.values():
            meta = pod["metadata"]
            annotations = meta.get("annotations") or {}
            if meta.get("deletionTimestamp") or int(annotations.get(pods.JOB_VERSION, "-1")) != self.version:
                continue
            task = annotations.get(pods.TASK_SPEC, "")
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            if phase == "Failed":
                out.append((f"{meta['uid']}/PodFailed", policies.Request("PodFailed", task, meta["name"], exit_code(pod), finished_at(pod) or time.time())))
            elif phase == "Succeeded":
                succeeded_by_task[task] = succeeded_by_task.get(task, 0) + 1
            elif phase == "Pending":
                out.append((None, policies.Request("PodPending", task, meta["name"], since=parse_time(meta.get("creationTimestamp")) or time.time())))
        for task in self.job["spec"].get("tasks") or []:
            replicas = int(task.get("replicas", 0))
            if replicas > 0 and succeeded_by_task.get(task["name"], 0) >= replicas:
                out.append((f"{uid}/{self.version}/{task['name']}/TaskCompleted", policies.Request("TaskCompleted", task["name"])))
            if self._task_failed(task):
                out.append((f"{uid}/{self.version}/{task['name']}/TaskFailed", policies.Request("TaskFailed", task["name"])))
        for e in self.evicted:
            if e.version == self.version:
                out.append((self._eviction_id(e), policies.Request("PodEvicted", e.task, e.pod, since=e.at)))
        pg_phase = ((self.pg or {}).get("status") or {}).get("phase") or ""
        pg_uid = (self.pg or {}).get("metadata", {}).get("uid", "")
        seen = self.ctl._pg_phase_seen.get(pg_uid)
        if pg_uid:
            self.ctl._pg_phase_seen[pg_uid] = pg_phase
        if pg_phase == "Unknown" and seen != "Unknown":
            out.append((f"{pg_uid}/{time.time()}/Unknown", policies.Request("Unknown")))
        return out

    def _task_failed(self, task: dict[str, Any]) -> bool:
        """The task's pods that still run (or wait) have restarted maxRetry times in all
        (upstream: jobCache.TaskFailed; maxRetry -1 means no limit, 0 the default 3)."""
        max_retry = int(task.get("maxRetry") or 0)
        if max_retry == -1 or int(task.get("replicas", 0)) == 0:
            return False
        max_retry = max_retry or 3
        restarts = 0
        for pod in self.pods.values():
            annotations = pod["metadata"].get("annotations") or {}
            status = pod.get("status") or {}
            if annotations.get(pods.TASK_SPEC) != task["name"] or int(annotations.get(pods.JOB_VERSION, "-1")) != self.version:
                continue
            if status.get("phase") in ("Running", "Pending") and not pod["metadata"].get("deletionTimestamp"):
                for c in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
                    restarts += int(c.get("restartCount") or 0)
        return restarts >= max_retry

    def _choose_action(self) -> tuple[str, policies.Request | None]:
        replay = self.ctl._replay.pop(self.meta["uid"], None)
        if replay is not None:
            return replay
        if self.ctl.features.commands and self.commands:
            cmd = sorted(self.commands, key=lambda c: c["metadata"].get("creationTimestamp") or "")[0]
            # The Command is consumed first, as vc-controller-manager does; the action follows.
            try:
                self.ctl.custom.delete_namespaced_custom_object(*BUS, cmd["metadata"]["namespace"], "commands", cmd["metadata"]["name"])
            except kubernetes.client.ApiException as err:
                if err.status != 404:
                    raise
            self.ctl.commands.forget(cmd["metadata"]["namespace"], cmd["metadata"]["name"])
            self.ctl.record_event(self.job, "CommandIssued", f"Start to execute command {cmd['action']}, and clean it up to make sure executed not more than once.")
            return str(cmd["action"]), None
        if self.meta["uid"] not in self.ctl._synced:
            # A job's first pass after the controller starts is a plain sync, as in
            # vc-controller-manager, whose informers hand it every job and pod as added (a sync
            # each) before any update can raise an event: the status catches up with the pods
            # (Pending -> Running) before the next pass, at once, acts on what they show. Without
            # it a controller restarted mid-job would act on a failure from a status that never
            # said the job ran.
            self.ctl._synced.add(self.meta["uid"])
            self.ctl.wake_at(time.time())
            return policies.SYNC, None
        if not self.ctl.features.policies:
            return policies.SYNC, None
        now = time.time()
        for identity, req in self._requests():
            if identity is not None and identity in self.ctl._handled:
                continue
            decision = policies.decide(self.job, req)
            if decision.action == policies.SYNC:
                if identity is not None:
                    self.ctl._handled.add(identity)
                continue
            due = req.since + decision.delay_s
            if decision.delay_s and now < due:
                self.ctl.wake_at(due)
                continue
            if identity is not None:
                self.ctl._handled.add(identity)
            return decision.action, req
        return policies.SYNC, None

    # --- the phase machine's operations ----------------------------------------------------------
    def _delete_pod(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        with self.ctl._lock:
            self.ctl._our_deletions.add(meta["uid"])
        try:
            self.ctl.core.delete_namespaced_pod(meta["name"], meta["namespace"], grace_period_seconds=0)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise

    def kill_job(self, retain: str, update: states.UpdateFn | None) -> None:
        last_retry = int(self.status.get("retryCount", 0)) >= int(self.job["spec"].get("maxRetry", 3)) - 1
        keep = ("Succeeded", "Failed") if retain == states.RETAIN_SOFT or last_retry else ()
        counts = new_counts()
        per_task: dict[str, dict[str, int]] = {}
        doomed = []
        for pod in self.pods.values():
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            if pod["metadata"].get("deletionTimestamp"):
                counts["terminating"] += 1
                continue
            if phase in keep:
                count_pod(pod, counts, per_task)
                continue
            doomed.append(pod)
            counts["terminating"] += 1
        self._finish_kill(counts, per_task, update, doomed)

    def kill_target(self, task: str, pod_name: str, update: states.UpdateFn | None) -> None:
        counts = new_counts()
        per_task: dict[str, dict[str, int]] = {}
        doomed = []
        for pod in self.pods.values():
            annotations = pod["metadata"].get("annotations") or {}
            targeted = annotations.get(pods.TASK_SPEC) == task and (not pod_name or pod["metadata"]["name"] == pod_name)
            if pod["metadata"].get("deletionTimestamp"):
                counts["terminating"] += 1
            elif targeted:
                doomed.append(pod)
                counts["terminating"] += 1
            else:
                count_pod(pod, counts, per_task)
        self._finish_kill(counts, per_task, update, doomed)

    def _finish_kill(self, counts: dict[str, int], per_task: dict[str, dict[str, int]], update: states.UpdateFn | None, doomed: list[dict[str, Any]]) -> None:
        self.status.update(counts)
        self.status["taskStatusCount"] = {t: {"phase": c} for t, c in sorted(per_task.items())}
        changed = update(self.status) if update is not None else False
        if changed:
            # Pods created from now on belong to a new version; the old ones raise no events.
            self.status["version"] = self.version + 1
        # Pods first, then the status, in vc-controller-manager's order (KillJob). The other order
        # would not survive a stop between the two either: Restarting with the old pods alive is
        # a state the phase machine never leaves by deleting them.
        for pod in doomed:
            self._delete_pod(pod)
        self._write_status(transition=changed)
        if self.phase in RELEASED_PHASES or changed:
            # Volcano releases the PodGroup whenever it kills; the next sync makes a new one.
            self._delete_podgroup()
        if self.phase in RELEASED_PHASES:
            self._release_plugin_objects()

    def sync_job(self, update: states.UpdateFn | None) -> None:
        self._ensure_plugin_objects()
        if self.ctl.features.volumes and self.phase == "Pending" and not self._claims_ready():
            return
        pg = self._ensure_podgroup()
        self._report_podgroup_pending(pg)
        pg_phase = ((pg or {}).get("status") or {}).get("phase") or "Pending"
        if pg_phase != "Pending":
            self._sync_pods()
        counts = new_counts()
        per_task: dict[str, dict[str, int]] = {}
        for pod in self.pods.values():
            if pod["metadata"].get("deletionTimestamp"):
                counts["terminating"] += 1
            else:
                count_pod(pod, counts, per_task)
        self.status.update(counts)
        self.status["taskStatusCount"] = {t: {"phase": c} for t, c in sorted(per_task.items())}
        changed = update(self.status) if update is not None else False
        self._write_status(transition=changed)

    def _report_podgroup_pending(self, pg: dict[str, Any] | None) -> None:
        """What the scheduler said of the PodGroup, on the Job where users look: when its latest
        True condition (by lastTransitionTime) is not Scheduled, a Warning `PodGroupPending`
        "PodGroup <ns>:<job> <type>, reason: <message>". Upstream (recordPodGroupEvent) records
        it at every sync and its event recorder folds the repeats into one Event's count; here
        it is recorded once per distinct message of a PodGroup."""
        conditions = [c for c in ((pg or {}).get("status") or {}).get("conditions") or [] if c.get("status") == "True"]
        if pg is None or not conditions:
            return
        # Ties keep the first listed, as upstream's strictly-after comparison does.
        latest = max(conditions, key=lambda c: c.get("lastTransitionTime") or "")
        if latest.get("type") == "Scheduled":
            return
        message = f"PodGroup {self.meta['namespace']}:{self.meta['name']} {str(latest.get('type', '')).lower()}, reason: {latest.get('message', '')}"
        uid = pg["metadata"].get("uid", "")
        if self.ctl._pg_pending_reported.get(uid) == message:
            return
        self.ctl._pg_pending_reported[uid] = message
        self.ctl.record_event(self.job, "PodGroupPending", message, "Warning")

    # --- pods, PodGroup, plugin objects ------------------------------------------------------------
    def _sync_pods(self) -> None:
        expected: set[str] = set()
        for task in self.job["spec"].get("tasks") or []:
            names = [pods.pod_name(self.meta["name"], task["name"], i) for i in range(int(task.get("replicas", 0)))]
            expected.update(names)
            if self.ctl.features.dependson and not dependson.ready_to_start(self.job, task, self.pods):
                continue
            for index, name in enumerate(names):
                if name in self.pods:
                    continue
                body = pods.make_pod(self.job, task, index, self.version, int(self.status.get("retryCount", 0)))
                if self.ctl.features.volumes:
                    volumes.mount(body, self.job)
                for plugin in self.plugins:
                    plugin.on_pod_create(body, self.job)
                try:
                    created = self.ctl.core.create_namespaced_pod(self.meta["namespace"], client.as_body(body))
                    self.pods[name] = self.ctl.core.api_client.sanitize_for_serialization(created)
                except kubernetes.client.ApiException as err:
                    if err.status != 409:
                        raise
        for name, pod in list(self.pods.items()):
            # Scaled down, or a task removed: its pods go.
            if self.ctl.features.elastic and name not in expected and not pod["metadata"].get("deletionTimestamp"):
                self._delete_pod(pod)
                pod["metadata"]["deletionTimestamp"] = now_rfc3339()

    def _claims_ready(self) -> bool:
        """A job that has not started yet gets its volumes' claims before its PodGroup: generated
        names are written into the Job, a missing named claim keeps it waiting (volumes.py).
        Upstream: initiateJob, createJobIOIfNotExist."""
        if not self.job["spec"].get("volumes"):
            return True
        claims = volumes.ensure_claims(self.ctl.core, self.job)
        if claims.named_now:
            updated = cast(dict[str, Any], self.ctl.custom.patch_namespaced_custom_object(*BATCH, self.meta["namespace"], "jobs", self.meta["name"], {"spec": {"volumes": claims.volumes}}))
            self.ctl.jobs.put(updated)
            self.job["spec"]["volumes"] = claims.volumes
            self.meta["resourceVersion"] = updated["metadata"].get("resourceVersion")
        if claims.error:
            self.ctl.record_event(self.job, volumes.PVC_ERROR, f"Failed to create PVC, err: {claims.error}", "Warning")
            # Claims are not watched: look again shortly.
            self.ctl.wake_at(time.time() + 2.0)
            return False
        self.status["controlledResources"] = {**(self.status.get("controlledResources") or {}), **volumes.controlled(claims.volumes)}
        return True

    def _ensure_podgroup(self) -> dict[str, Any] | None:
        spec = self.job["spec"]
        want = {
            "minMember": int(spec["minAvailable"]),
            "minTaskMember": {t["name"]: int(t["minAvailable"]) for t in spec.get("tasks") or []},
            "queue": spec["queue"],
            "minResources": pods.min_resources(self.job, self._priority_of),
        }
        if spec.get("priorityClassName"):
            want["priorityClassName"] = spec["priorityClassName"]
        if spec.get("networkTopology") and self.ctl.features.network_topology:
            want["networkTopology"] = spec["networkTopology"]
        sub_groups = pods.sub_group_policy(self.job)
        if sub_groups and self.ctl.features.network_topology:
            want["subGroupPolicy"] = sub_groups
        ns, name = self.meta["namespace"], pods.podgroup_name(self.job)
        if self.pg is None:
            body = {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                # The Job's annotations and labels go onto its PodGroup, where the scheduler's
                # plugins read them (sla, task-topology). Upstream: createOrUpdatePodGroup.
                "metadata": {
                    "name": name, "namespace": ns, "ownerReferences": [pods.owner(self.job)],
                    "annotations": {**(self.meta.get("annotations") or {}), pods.JOB_NAME: self.meta["name"]},
                    "labels": dict(self.meta.get("labels") or {}),
                },
                "spec": want,
            }
            try:
                self.pg = cast(dict[str, Any], self.ctl.custom.create_namespaced_custom_object(*SCHEDULING, ns, "podgroups", body))
            except kubernetes.client.ApiException as err:
                if err.status != 409:
                    raise
                self.pg = cast(dict[str, Any], self.ctl.custom.get_namespaced_custom_object(*SCHEDULING, ns, "podgroups", name))
            self.ctl.podgroups.put(self.pg)
            return self.pg
        current = self.pg.get("spec") or {}
        if self.ctl.features.elastic and any(current.get(k) != v for k, v in want.items() if k in ("minMember", "minTaskMember", "minResources")):
            # Elastic scaling changed the gang: the PodGroup follows the job.
            self.pg = cast(dict[str, Any], self.ctl.custom.patch_namespaced_custom_object(*SCHEDULING, ns, "podgroups", name, {"spec": {k: want[k] for k in ("minMember", "minTaskMember", "minResources")}}))
            self.ctl.podgroups.put(self.pg)
        return self.pg

    def _priority_of(self, class_name: str) -> int:
        found = self.ctl.priority_classes.get("", class_name) if class_name else None
        return int((found or {}).get("value") or 0)

    def _delete_podgroup(self) -> None:
        ns, name = self.meta["namespace"], pods.podgroup_name(self.job)
        if self.pg is None:
            return
        try:
            self.ctl.custom.delete_namespaced_custom_object(*SCHEDULING, ns, "podgroups", name)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
        self.ctl.podgroups.forget(ns, name)
        self.pg = None

    def _spec_hash(self) -> str:
        return hashlib.sha1(json.dumps([self.meta["uid"], self.job["spec"].get("tasks"), self.job["spec"].get("plugins")], sort_keys=True).encode()).hexdigest()

    def _ensure_plugin_objects(self) -> None:
        key = f"{self.meta['namespace']}/{self.meta['name']}"
        digest = self._spec_hash()
        if self.ctl._ensured.get(key) == digest or (key in self.ctl._ensured and not self.ctl.features.elastic):
            return
        for plugin in self.plugins:
            for body in plugin.objects(self.job):
                self.ctl.owned.ensure(body)
        self.ctl._ensured[key] = digest

    def _release_plugin_objects(self) -> None:
        key = f"{self.meta['namespace']}/{self.meta['name']}"
        self.ctl._ensured.pop(key, None)
        released = f"{self.meta['uid']}/{self.version}"
        if released in self.ctl._released:
            return
        self.ctl._released.add(released)
        for plugin in self.plugins:
            if plugin.name == "ssh":
                continue  # the keys stay until the job is deleted (owner references remove them)
            for body in plugin.objects(self.job):
                self.ctl.owned.delete(body["kind"], self.meta["namespace"], body["metadata"]["name"])

    # --- status --------------------------------------------------------------------------------------
    def _write_status(self, transition: bool) -> None:
        before = self.job.get("status") or {}
        if transition:
            stamp = now_rfc3339()
            self.status["state"]["lastTransitionTime"] = stamp
            self.status["conditions"] = list(self.status.get("conditions") or []) + [{"status": self.phase, "lastTransitionTime": stamp}]
        if self.status == before:
            return
        # The resourceVersion the status was computed from is a precondition, as UpdateStatus's is
        # upstream: a status worked out from a stale copy of the Job (a controller just restarted
        # whose cache predates its predecessor's last write) is refused with 409, and the next
        # pass works it out again from the Job as it is, instead of writing an old phase back.
        patch = {"metadata": {"resourceVersion": self.meta.get("resourceVersion")}, "status": merge_patch(before, self.status)}
        updated = cast(dict[str, Any], self.ctl.custom.patch_namespaced_custom_object_status(*BATCH, self.meta["namespace"], "jobs", self.meta["name"], patch))
        self.ctl.jobs.put(updated)
        self.job["status"] = updated.get("status")
        self.meta["resourceVersion"] = updated["metadata"].get("resourceVersion")


def merge_patch(old: Any, new: Any) -> Any:
    """A JSON merge patch from old to new: keys that disappeared are set to null (a plain merge
    would keep, say, a task's stale phase counts)."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    out: dict[str, Any] = {k: None for k in old if k not in new}
    for key, value in new.items():
        out[key] = merge_patch(old.get(key), value) if key in old else value
    return out


def new_counts() -> dict[str, int]:
    return {"pending": 0, "running": 0, "succeeded": 0, "failed": 0, "terminating": 0, "unknown": 0}


def count_pod(pod: dict[str, Any], counts: dict[str, int], per_task: dict[str, dict[str, int]]) -> None:
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    key = phase.lower()
    counts[key if key in counts else "unknown"] += 1
    task = (pod["metadata"].get("annotations") or {}).get(pods.TASK_SPEC, "")
    per_task.setdefault(task, {}).setdefault(phase, 0)
    per_task[task][phase] += 1


def exit_code(pod: dict[str, Any]) -> int | None:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if not statuses:
        return None
    terminated = (statuses[0].get("state") or {}).get("terminated") or {}
    code = terminated.get("exitCode")
    return int(code) if code is not None else None


def finished_at(pod: dict[str, Any]) -> float | None:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if not statuses:
        return None
    return parse_time(((statuses[0].get("state") or {}).get("terminated") or {}).get("finishedAt"))
