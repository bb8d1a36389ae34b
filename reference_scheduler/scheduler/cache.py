"""The scheduler's cache: watch-fed stores of nodes, pods, PodGroups and Queues, a snapshot per
cycle, and the writes a cycle makes (binds, PodGroup status, events).

Upstream: pkg/scheduler/cache/cache.go (the kit's own, smaller version).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import json
import logging
import threading
from typing import Any, Sequence

import kubernetes

from reference_scheduler.kube import informer
from reference_scheduler.scheduler.api import job_info, node_info, queue_info

log = logging.getLogger(__name__)
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")
TOPOLOGY = ("topology.volcano.sh", "v1alpha1")
NODEINFO = ("nodeinfo.volcano.sh", "v1alpha1")
BIND_WORKERS = 8


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
    def __init__(self, api: kubernetes.client.ApiClient, scheduler_name: str, node_selector: Sequence[str] = ()) -> None:
        self.api = api
        self.scheduler_name = scheduler_name
        # `--node-selector`: the `key:value` labels of the nodes this scheduler works with.
        self.node_selector = parse_node_selector(node_selector)
        self.core = kubernetes.client.CoreV1Api(api)
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.changed = threading.Event()
        self.nodes = informer.Store("nodes", informer.core_lister(api, "nodes"), self.changed)
        self.pods = informer.Store("pods", informer.core_lister(api, "pods"), self.changed)
        self.podgroups = informer.Store("podgroups", informer.custom_lister(api, *SCHEDULING, "podgroups"), self.changed)
        self.queues = informer.Store("queues", informer.custom_lister(api, *SCHEDULING, "queues"), self.changed)
        self.priority_classes = informer.Store("priorityclasses", informer.core_lister(api, "priorityclasses"), self.changed)
        # Topology for the numa-aware and network-topology-aware plugins (read as the API has them).
        self.hypernodes = informer.Store("hypernodes", informer.custom_lister(api, *TOPOLOGY, "hypernodes"), self.changed, optional=True)
        self.numatopologies = informer.Store("numatopologies", informer.custom_lister(api, *NODEINFO, "numatopologies"), self.changed, optional=True)
        # The scheduler's memory of exclusive CPUs it gave to pods (see Session.cpu_assignments).
        self.cpu_assignments: dict[str, tuple[str, frozenset[int]]] = {}
        self.stores = (self.nodes, self.pods, self.podgroups, self.queues, self.priority_classes, self.hypernodes, self.numatopologies)
        self._events_sent: dict[tuple[str, str, str], str] = {}
        # Binds go out on a few threads, so a gang's binds overlap and the cycle need not wait.
        self._binder = concurrent.futures.ThreadPoolExecutor(BIND_WORKERS, thread_name_prefix="bind")

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
                self.custom.create_cluster_custom_object(*SCHEDULING, "queues", body)
            except kubernetes.client.ApiException as err:
                if err.status != 409:
                    raise

    # --- the snapshot -------------------------------------------------------------------------------
    def snapshot(self) -> tuple[dict[str, job_info.JobInfo], dict[str, node_info.NodeInfo], dict[str, queue_info.QueueInfo]]:
        nodes = {n["metadata"]["name"]: node_info.NodeInfo.from_node(n) for n in self.nodes.snapshot() if selected(n, self.node_selector)}
        queues = {q["metadata"]["name"]: queue_info.QueueInfo.from_queue(q) for q in self.queues.snapshot()}
        classes = {c["metadata"]["name"]: c for c in self.priority_classes.snapshot()}
        default_priority = max((int(c.get("value") or 0) for c in classes.values() if c.get("globalDefault")), default=0)
        jobs: dict[str, job_info.JobInfo] = {}
        for pg in self.podgroups.snapshot():
            meta = pg["metadata"]
            spec = pg.get("spec") or {}
            uid = f"{meta['namespace']}/{meta['name']}"
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
            task = job_info.TaskInfo.from_pod(pod, uid)
            if ours and uid in jobs:
                jobs[uid].tasks[task.uid] = task
            # Every pod holding a node's resources counts there, whoever scheduled it.
            if task.node_name in nodes and task.status in job_info.OCCUPYING:
                nodes[task.node_name].add_task(task)
        return jobs, nodes, queues

    def topology(self) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
        """HyperNodes and Numatopologies by name, as this cycle sees them."""
        return ({h["metadata"]["name"]: h for h in self.hypernodes.snapshot()}, {n["metadata"]["name"]: n for n in self.numatopologies.snapshot()})

    # --- writes --------------------------------------------------------------------------------------
    def bind(self, task: job_info.TaskInfo, node: str) -> None:
        """Bind through the Binding subresource, asynchronously as Volcano's bind workers do; the
        store notes the bind at once so the next cycle does not place the pod again, and gets
        its old copy back if the API refuses."""
        original = task.pod
        pod = {**original, "spec": {**original["spec"], "nodeName": node}}
        self.pods.put(pod)
        self._binder.submit(self._bind, original, node)

    def _bind(self, pod: dict[str, Any], node: str) -> None:
        meta = pod["metadata"]
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"], "namespace": meta["namespace"]}, "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            # The client cannot read a Binding response back into a model: keep it raw.
            self.core.create_namespaced_binding(meta["namespace"], body, _preload_content=False)
        except kubernetes.client.ApiException as err:
            log.warning("binding %s/%s to %s failed: %s", meta["namespace"], meta["name"], node, err.reason)
            self.pods.put(pod)
            self.changed.set()
            return
        except Exception:  # a dropped connection must not kill the worker silently
            log.exception("binding %s/%s to %s failed", meta["namespace"], meta["name"], node)
            self.pods.put(pod)
            self.changed.set()
            return
        self.event(pod, "Normal", "Scheduled", f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}")

    def wait_binds(self) -> None:
        """Block until every bind submitted so far has been answered (for an orderly stop)."""
        self._binder.shutdown(wait=True)

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
        try:
            self.core.patch_namespaced_pod_status(task.name, task.namespace, {"status": {"conditions": conditions}})
            self.core.delete_namespaced_pod(task.name, task.namespace)
        except kubernetes.client.ApiException as err:
            log.warning("evicting %s/%s failed: %s", task.namespace, task.name, err.reason)
            return
        # Note the deletion at once, so the next cycle counts the pod as releasing.
        pod = json.loads(json.dumps(task.pod))
        pod["metadata"]["deletionTimestamp"] = now
        self.pods.put(pod)

    def update_podgroup_status(self, job: job_info.JobInfo, status: dict[str, Any]) -> None:
        try:
            updated = self.custom.patch_namespaced_custom_object_status(*SCHEDULING, job.namespace, "podgroups", job.name, {"status": status})
            self.podgroups.put(updated)
        except kubernetes.client.ApiException as err:
            log.warning("updating PodGroup %s status failed: %s", job.uid, err.reason)

    def update_queue_allocated(self, queue: str, allocated: dict[str, str | None]) -> None:
        """Merge the queue's allocated resources into its status (None removes one); only this
        key: the queue controller writes the state and counts beside it."""
        try:
            updated = self.custom.patch_cluster_custom_object_status(*SCHEDULING, "queues", queue, {"status": {"allocated": allocated}})
            self.queues.put(updated)
        except kubernetes.client.ApiException as err:
            log.warning("updating Queue %s status failed: %s", queue, err.reason)

    def update_podgroup_annotations(self, job: job_info.JobInfo, annotations: dict[str, str]) -> None:
        """Merge annotations into the PodGroup (the HyperNode allocate recorded for the job)."""
        try:
            updated = self.custom.patch_namespaced_custom_object(*SCHEDULING, job.namespace, "podgroups", job.name, {"metadata": {"annotations": annotations}})
            self.podgroups.put(updated)
        except kubernetes.client.ApiException as err:
            log.warning("annotating PodGroup %s failed: %s", job.uid, err.reason)

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        """Record an event on the object; the same reason and message again is not repeated."""
        meta = obj["metadata"]
        key = (meta.get("uid", ""), reason, type_)
        if self._events_sent.get(key) == message:
            return
        self._events_sent[key] = message
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": meta.get("namespace") or "default"},
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
        try:
            self.core.create_namespaced_event(body["metadata"]["namespace"], body)
        except kubernetes.client.ApiException as err:
            log.debug("event %s on %s failed: %s", reason, meta["name"], err.reason)
