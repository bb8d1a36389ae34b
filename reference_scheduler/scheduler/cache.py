"""The scheduler's cache: watch-fed stores of nodes, pods, PodGroups and Queues, a snapshot per
cycle, and the writes a cycle makes (binds, PodGroup status, events).

Upstream: pkg/scheduler/cache/cache.go (the kit's own, smaller version).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import http.client
import json
import logging
import threading
import time
from typing import Any, Sequence

from reference_scheduler.kube import connection as connection_mod
from reference_scheduler.kube import informer, rest, workers
from reference_scheduler.scheduler import features as features_mod
from reference_scheduler.scheduler.api import job_info, node_info, queue_info, vgpu

log = logging.getLogger(__name__)
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")
TOPOLOGY = ("topology.volcano.sh", "v1alpha1")
NODEINFO = ("nodeinfo.volcano.sh", "v1alpha1")
POLICY = ("policy", "v1")
# Binds in flight at once: enough to keep the API server busy while each waits on etcd (Volcano
# starts a goroutine per bind). Measured with `vck bench scheduler`.
BIND_WORKERS = 128
# Status writes at the end of a cycle go out this many at a time, as Volcano's job updater does
# (jobUpdaterWorker); the cycle waits for them, so the next one sees what was written.
STATUS_WORKERS = 16
# Events are sent apart from the binds, as client-go's event broadcaster sends them, so a bind
# never waits for its Scheduled event.
EVENT_WORKERS = 4
# Binds go first: while any is unanswered, events and status writes wait (each at most this
# long), so a burst of binds has the API server to itself. Measured with `vck bench scheduler`:
# a tenth of the writes during a burst were status writes and events.
DEFER_S = 2.0


def parse_node_selector(items: Sequence[str]) -> frozenset[tuple[str, str]]:
    """`key:value` items (vc-scheduler's `--node-selector`); malformed ones are ignored, as there.
    Upstream: pkg/scheduler/cache/cache.go (updateNodeSelectors)."""
    pairs = set()
    for item in items:
        key, sep, value = item.partition(":")
        if sep and key.strip() and value.strip():
            pairs.add((key.strip(), value.strip()))
    return frozenset(pairs)


def selected(node: dict[str, Any], selector: frozenset[tuple[str, str]]) -> bool:
    """A node the scheduler works with: any node when no selector is set, else one carrying any of
    its labels. Upstream: pkg/scheduler/cache/event_handlers.go (nodeCanAddCache)."""
    if not selector:
        return True
    labels = node.get("metadata", {}).get("labels") or {}
    return any((key, value) in selector for key, value in labels.items())


class Cache:
    def __init__(self, connection: connection_mod.Connection, scheduler_name: str, node_selector: Sequence[str] = (), features: features_mod.Features = features_mod.FULL) -> None:
        self.connection = connection
        self.scheduler_name = scheduler_name
        # The rules `--disable` switched off (features.py); every session reads them here.
        self.features = features
        # `--node-selector`: the `key:value` labels of the nodes this scheduler works with.
        self.node_selector = parse_node_selector(node_selector)
        # The watches and every write take the lean path (kube/rest.py): the official client is
        # never loaded (its models cost seconds of CPU at a first use, which a scheduler restarted
        # in the middle of a preemption cannot afford before it evicts).
        self.rest = connection.rest
        self.changed = threading.Event()
        self.nodes = informer.Store("nodes", self._source("", "v1", "nodes"), self.changed)
        self.pods = informer.Store("pods", self._source("", "v1", "pods"), self.changed)
        self.podgroups = informer.Store("podgroups", self._source(*SCHEDULING, "podgroups"), self.changed)
        self.queues = informer.Store("queues", self._source(*SCHEDULING, "queues"), self.changed)
        self.priority_classes = informer.Store("priorityclasses", self._source("scheduling.k8s.io", "v1", "priorityclasses"), self.changed)
        # Topology for the numa-aware and network-topology-aware plugins (read as the API has them).
        self.hypernodes = informer.Store("hypernodes", self._source(*TOPOLOGY, "hypernodes"), self.changed, optional=True)
        self.numatopologies = informer.Store("numatopologies", self._source(*NODEINFO, "numatopologies"), self.changed, optional=True)
        # PodDisruptionBudgets for the pdb plugin (their status as the disruption controller keeps it).
        self.pdbs = informer.Store("poddisruptionbudgets", self._source(*POLICY, "poddisruptionbudgets"), self.changed, optional=True)
        # ResourceQuotas for the resourcequota plugin (their status as the quota controller keeps it).
        self.quotas = informer.Store("resourcequotas", self._source("", "v1", "resourcequotas"), self.changed, optional=True)
        # The scheduler's memory of exclusive CPUs it gave to pods (see Session.cpu_assignments).
        self.cpu_assignments: dict[str, tuple[str, frozenset[int]]] = {}
        # What plugins keep across cycles (see Session.plugin_memory).
        self.plugin_memory: dict[str, Any] = {}
        self.stores = (self.nodes, self.pods, self.podgroups, self.queues, self.priority_classes, self.hypernodes, self.numatopologies, self.pdbs, self.quotas)
        self._events_sent: dict[tuple[str, str, str], str] = {}
        self._events_lock = threading.Lock()
        # Binds submitted and not yet answered; events and status writes wait on it (see DEFER_S).
        self._binds_pending = 0
        self._binds_idle = threading.Condition()
        # Binds go out on their own threads, so a gang's binds overlap and the cycle need not wait.
        self._binder = workers.Workers(BIND_WORKERS, "bind")
        self._status_writer = concurrent.futures.ThreadPoolExecutor(STATUS_WORKERS, thread_name_prefix="status")
        self._event_sender = workers.Workers(EVENT_WORKERS, "event")
        # Status writes of the cycle being closed, waited for by wait_writes().
        self._writes: list[concurrent.futures.Future[None]] = []

    def _source(self, group: str, version: str, plural: str) -> informer.RestSource:
        return informer.RestSource(self.rest, rest.path(group, version, plural))

    def start(self, timeout_s: float = 60.0) -> None:
        for store in self.stores:
            store.start()
        for store in self.stores:
            if not store.synced.wait(timeout_s):
                raise TimeoutError(f"the {store.name} cache did not sync within {timeout_s:.0f}s")

    def ensure_default_queues(self) -> None:
        """Volcano's scheduler creates `root` (not reclaimable) and `default` at start."""
        for name, reclaimable in (("root", False), ("default", True)):
            body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": {"weight": 1, "reclaimable": reclaimable}}
            try:
                self.rest.post(rest.path(*SCHEDULING, "queues"), body)
            except rest.ApiError as err:
                if err.status != 409:
                    raise

    # --- the snapshot -------------------------------------------------------------------------------
    def snapshot(self) -> tuple[dict[str, job_info.JobInfo], dict[str, node_info.NodeInfo], dict[str, queue_info.QueueInfo]]:
        node_objects = [n for n in self.nodes.snapshot() if selected(n, self.node_selector)]
        nodes = {n["metadata"]["name"]: node_info.NodeInfo.from_node(n) for n in node_objects}
        self._answer_vgpu_handshakes(node_objects)
        queues = {q["metadata"]["name"]: queue_info.QueueInfo.from_queue(q) for q in self.queues.snapshot()}
        classes = {c["metadata"]["name"]: c for c in self.priority_classes.snapshot()}
        default_priority = max((int(c.get("value") or 0) for c in classes.values() if c.get("globalDefault")), default=0)
        jobs: dict[str, job_info.JobInfo] = {}
        for pg in self.podgroups.snapshot():
            meta = pg["metadata"]
            spec = pg.get("spec") or {}
            uid = f"{meta['namespace']}/{meta['name']}"
            if (spec.get("queue") or "default") not in queues:
                # A job whose queue does not exist (deleted under it) is left alone: not scheduled,
                # its pods still holding their nodes. Upstream: SchedulerCache.Snapshot.
                continue
            jobs[uid] = job_info.JobInfo(
                uid=uid,
                name=meta["name"],
                namespace=meta["namespace"],
                queue=spec.get("queue") or "default",
                min_available=int(spec.get("minMember") or 0),
                min_task_member={k: int(v) for k, v in (spec.get("minTaskMember") or {}).items()},
                podgroup=json.loads(json.dumps(pg)),
                creation=meta.get("creationTimestamp", ""),
                # A job's priority is its PodGroup's priority class. Upstream: JobInfo.SetPodGroup.
                priority=int((classes.get(spec.get("priorityClassName") or "") or {}).get("value", default_priority)),
            )
        for pod in self.pods.snapshot():
            meta = pod["metadata"]
            group = (meta.get("annotations") or {}).get(job_info.GROUP_NAME_ANNOTATION)
            uid = f"{meta.get('namespace')}/{group}" if group else ""
            ours = (pod.get("spec") or {}).get("schedulerName") == self.scheduler_name
            task = job_info.TaskInfo.from_pod(pod, uid, self.features)
            if ours and uid in jobs:
                jobs[uid].tasks[task.uid] = task
            # Every pod holding a node's resources counts there, whoever scheduled it.
            if task.node_name in nodes and task.status in job_info.OCCUPYING:
                nodes[task.node_name].add_task(task)
        return jobs, nodes, queues

    def _answer_vgpu_handshakes(self, node_objects: list[dict[str, Any]]) -> None:
        """Answer the vGPU device plugin's handshake on the nodes it registered GPUs on: request a
        report, or mark the node's vGPUs gone when a request went unanswered (api/vgpu.py).
        Upstream: vgpu.NewGPUDevices, run on every node the cache takes in."""
        now = datetime.datetime.now(datetime.timezone.utc)
        for node in node_objects:
            annotations = node["metadata"].get("annotations") or {}
            if vgpu.REGISTER in annotations:
                _, answer = vgpu.handshake(annotations, now)
                if answer is not None:
                    self.annotate_node(node["metadata"]["name"], {vgpu.HANDSHAKE: answer})

    def annotate_node(self, name: str, annotations: dict[str, str]) -> None:
        path = rest.path("", "v1", "nodes", None, name)
        self._write(self.nodes, path, {"metadata": {"annotations": annotations}}, f"annotating Node {name}")

    def topology(self) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
        """HyperNodes and Numatopologies by name, as this cycle sees them."""
        return ({h["metadata"]["name"]: h for h in self.hypernodes.snapshot()}, {n["metadata"]["name"]: n for n in self.numatopologies.snapshot()})

    def disruption_budgets(self) -> list[dict[str, Any]]:
        """The PodDisruptionBudgets as this cycle sees them."""
        return self.pdbs.snapshot()

    def resource_quotas(self) -> list[dict[str, Any]]:
        """The ResourceQuotas as this cycle sees them."""
        return self.quotas.snapshot()

    # --- writes --------------------------------------------------------------------------------------
    def bind(self, task: job_info.TaskInfo, node: str) -> None:
        """Bind through the Binding subresource, asynchronously as Volcano's bind workers do; the
        store notes the bind at once so the next cycle does not place the pod again, and gets
        its old copy back if the API refuses."""
        original = task.pod
        pod = {**original, "spec": {**original["spec"], "nodeName": node}}
        if task.bind_annotations:
            # Noted at once too, so the next cycle counts the pod where the plugin put it.
            meta = original["metadata"]
            pod["metadata"] = {**meta, "annotations": {**(meta.get("annotations") or {}), **task.bind_annotations}}
        self.pods.put(pod)
        with self._binds_idle:
            self._binds_pending += 1
        self._binder.submit(self._bind, original, node, dict(task.bind_annotations))

    def _bind(self, pod: dict[str, Any], node: str, annotations: dict[str, str]) -> None:
        try:
            if annotations:
                self._annotate(pod, annotations)
            self._post_binding(pod, node)
        finally:
            with self._binds_idle:
                self._binds_pending -= 1
                if not self._binds_pending:
                    self._binds_idle.notify_all()

    def _annotate(self, pod: dict[str, Any], annotations: dict[str, str]) -> None:
        """Write what a plugin chose for the pod (deviceshare's cards) before the bind; a refusal
        is logged and the bind goes ahead, as upstream's allocate handler does."""
        meta = pod["metadata"]
        try:
            self.rest.merge_patch(rest.path("", "v1", "pods", meta["namespace"], meta["name"]), {"metadata": {"annotations": annotations}})
        except rest.ApiError as err:
            log.warning("annotating %s/%s failed: %s", meta["namespace"], meta["name"], err.reason)
        except Exception:  # a dropped connection: the bind still goes ahead
            log.exception("annotating %s/%s failed", meta["namespace"], meta["name"])

    def _post_binding(self, pod: dict[str, Any], node: str) -> None:
        meta = pod["metadata"]
        ns, name = meta["namespace"], meta["name"]
        # The pod's uid makes the API server refuse the bind if the pod was replaced by another of
        # the same name meanwhile (as Volcano's binder sends it).
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "namespace": ns, "uid": meta.get("uid")}, "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            self.rest.post(rest.path("", "v1", "pods", ns, name, "binding"), body)
        except rest.ApiError as err:
            log.warning("binding %s/%s to %s failed: %s", ns, name, node, err.reason)
            self.pods.put(pod)
            self.changed.set()
            return
        except Exception:  # a dropped connection must not kill the worker silently
            log.exception("binding %s/%s to %s failed", ns, name, node)
            self.pods.put(pod)
            self.changed.set()
            return
        self.event(pod, "Normal", "Scheduled", f"Successfully assigned {ns}/{name} to {node}")

    def wait_binds(self) -> None:
        """Block until every bind and event submitted so far has been answered (for an orderly stop)."""
        self._binder.shutdown()
        self._status_writer.shutdown(wait=True)
        self._event_sender.shutdown()

    def wait_writes(self) -> None:
        """Block until the status writes submitted since the last call are answered: a cycle
        closes only once they are, so the next cycle's snapshot holds them."""
        writes, self._writes = self._writes, []
        concurrent.futures.wait(writes)

    def evict(self, task: job_info.TaskInfo, job: job_info.JobInfo, reason: str) -> None:
        """Evict as Volcano does: an `Evict` event on the pod and its PodGroup, a DisruptionTarget
        condition, then delete the pod. Upstream: SchedulerCache.Evict, defaultEvictor.Evict."""
        message = f"Pod is evicted, because of {reason}"
        self.event(task.pod, "Warning", "Evict", message)
        self.event(job.podgroup, "Warning", "Evict", f"Evict {task.namespace}/{task.name} because of {reason}")
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        conditions = [
            {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": f"{self.scheduler_name}: preempting to accommodate a higher priority pod", "lastTransitionTime": now},
        ]
        pod_path = rest.path("", "v1", "pods", task.namespace, task.name)
        try:
            # A strategic merge, as the official client sends for a core kind: the condition joins
            # the pod's others (a merge patch would replace the whole list).
            self.rest.request("PATCH", pod_path + "/status", json.dumps({"status": {"conditions": conditions}}).encode(), rest.STRATEGIC_MERGE_PATCH)
            self.rest.request("DELETE", pod_path)
        except rest.ApiError as err:
            log.warning("evicting %s/%s failed: %s", task.namespace, task.name, err.reason)
            return
        except (OSError, http.client.HTTPException) as err:  # a dropped connection: the next cycle evicts again
            log.warning("evicting %s/%s failed: %s", task.namespace, task.name, err)
            return
        # Note the deletion at once, so the next cycle counts the pod as releasing.
        pod = json.loads(json.dumps(task.pod))
        pod["metadata"]["deletionTimestamp"] = now
        self.pods.put(pod)

    def update_podgroup_status(self, job: job_info.JobInfo, status: dict[str, Any]) -> None:
        path = rest.path(*SCHEDULING, "podgroups", job.namespace, job.name, "status")
        self._write(self.podgroups, path, {"status": status}, f"updating PodGroup {job.uid} status")

    def update_queue_allocated(self, queue: str, allocated: dict[str, str | None]) -> None:
        """Merge the queue's allocated resources into its status (None removes one); only this
        key: the queue controller writes the state and counts beside it."""
        path = rest.path(*SCHEDULING, "queues", None, queue, "status")
        self._write(self.queues, path, {"status": {"allocated": allocated}}, f"updating Queue {queue} status")

    def update_podgroup_annotations(self, job: job_info.JobInfo, annotations: dict[str, str]) -> None:
        """Merge annotations into the PodGroup (the HyperNode allocate recorded for the job)."""
        path = rest.path(*SCHEDULING, "podgroups", job.namespace, job.name)
        self._write(self.podgroups, path, {"metadata": {"annotations": annotations}}, f"annotating PodGroup {job.uid}")

    def _write(self, store: informer.Store, path: str, patch: dict[str, Any], what: str) -> None:
        """A merge patch on the status writers; the store takes the object the API answers with."""

        due = time.monotonic() + DEFER_S

        def write() -> None:
            self._after_binds(due)
            try:
                store.put(self.rest.merge_patch(path, patch))
            except rest.ApiError as err:
                log.warning("%s failed: %s", what, err.reason)
            except Exception:  # a dropped connection: the next cycle writes again
                log.exception("%s failed", what)

        self._writes.append(self._status_writer.submit(write))

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        """Record an event on the object, sent apart from the caller (EVENT_WORKERS); the same
        reason and message again is not repeated."""
        meta = obj["metadata"]
        key = (meta.get("uid", ""), reason, type_)
        with self._events_lock:
            if self._events_sent.get(key) == message:
                return
            self._events_sent[key] = message
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        namespace = meta.get("namespace") or "default"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": namespace},
            "involvedObject": {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj.get("kind", "Pod"), "name": meta["name"], "namespace": meta.get("namespace"), "uid": meta.get("uid")},
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self.scheduler_name},
            "firstTimestamp": now[:19] + "Z",
            "lastTimestamp": now[:19] + "Z",
            "count": 1,
            "reportingComponent": self.scheduler_name,
        }
        self._event_sender.submit(self._send_event, namespace, body, time.monotonic() + DEFER_S)

    def _after_binds(self, due: float) -> None:
        """Wait until no bind is unanswered, or until `due` (time.monotonic())."""
        with self._binds_idle:
            self._binds_idle.wait_for(lambda: not self._binds_pending, max(0.0, due - time.monotonic()))

    def _send_event(self, namespace: str, body: dict[str, Any], due: float) -> None:
        self._after_binds(due)
        try:
            self.rest.post(rest.path("", "v1", "events", namespace), body)
        except rest.ApiError as err:
            log.debug("event %s on %s failed: %s", body["reason"], body["involvedObject"]["name"], err.reason)
        except Exception:  # a dropped connection: an event is not worth a retry
            log.debug("event %s on %s failed", body["reason"], body["involvedObject"]["name"], exc_info=True)
