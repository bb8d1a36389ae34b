"""The PodGroup controller for pods that no Volcano Job owns: a pod (of a k8s Job, a Deployment's
ReplicaSet, a StatefulSet, a DaemonSet, or bare) whose schedulerName is the scheduler's gets a PodGroup
`podgroup-<owner uid>` (minMember from the owner's `scheduling.volcano.sh/group-min-member`
annotation, else 1; queue from the pod's `scheduling.volcano.sh/queue-name`) and the annotation
naming it. The PodGroup also carries what the scheduler reads there: the owners' `volcano.sh/`
annotations (the controller's default `--inherit-owner-annotations`), then the pod's own
preemptable, cooldown-time, revocable-zone and JDB annotations and preemptable and cooldown-time
labels, and a network topology from the pod's `volcano.sh/network-topology-mode` (hard or soft,
hard when absent or unknown) and `volcano.sh/network-topology-highest-tier` annotations. A ReplicaSet or StatefulSet scaled to zero replicas gives its PodGroup up: a
Deployment's rollout scales the old ReplicaSet down to 0, so its PodGroup goes and the new
ReplicaSet's pods have their own.

Upstream: pkg/controllers/podgroup/pg_controller_handler.go.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import kubernetes

from reference_scheduler.controllers import quota
from reference_scheduler.kube import informer

log = logging.getLogger(__name__)
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")
GROUP_NAME = "scheduling.k8s.io/group-name"
MIN_MEMBER = "scheduling.volcano.sh/group-min-member"
QUEUE_NAME = "scheduling.volcano.sh/queue-name"
# Owner annotations under this prefix go onto the PodGroup. Upstream: inheritUpperAnnotations.
INHERITED_PREFIX = "volcano.sh/"
PREEMPTABLE = "volcano.sh/preemptable"
COOLDOWN_TIME = "volcano.sh/cooldown-time"
REVOCABLE_ZONE = "volcano.sh/revocable-zone"
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
TOPOLOGY_MODE = "volcano.sh/network-topology-mode"
TOPOLOGY_HIGHEST_TIER = "volcano.sh/network-topology-highest-tier"


class PodGroupController:
    def __init__(self, api: kubernetes.client.ApiClient, pods: informer.Store, podgroups: informer.Store, scheduler_name: str, network_topology: bool = True) -> None:
        self.core = kubernetes.client.CoreV1Api(api)
        self.apps = kubernetes.client.AppsV1Api(api)
        self.batch = kubernetes.client.BatchV1Api(api)
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.pods = pods
        self.podgroups = podgroups
        self.scheduler_name = scheduler_name
        # The job controller's `network-topology` feature: switched off, no topology is handed on
        # from a pod's annotations either (the broken build of the hypernode suite).
        self.network_topology = network_topology
        self._owner_annotations: dict[str, dict[str, str]] = {}
        # Only pods that changed since the last pass (and those whose adoption failed) are looked
        # at: a pass over every pod on every change cost the controller more CPU than the
        # scheduler at 50,000 pods (`vck bench scheduler`).
        self._pod_changes = pods.changes()
        self._retry: set[tuple[str, str]] = set()
        self.replicasets = informer.Store("replicasets", informer.core_lister(api, "replicasets"), pods.changed)
        self.statefulsets = informer.Store("statefulsets", informer.core_lister(api, "statefulsets"), pods.changed)

    def start(self, timeout_s: float = 60.0) -> None:
        for store in (self.replicasets, self.statefulsets):
            store.start()
        for store in (self.replicasets, self.statefulsets):
            if not store.synced.wait(timeout_s):
                raise TimeoutError(f"the {store.name} cache did not sync within {timeout_s:.0f}s")

    def reconcile_all(self) -> None:
        self._release_scaled_to_zero()
        changed = self._pod_changes.take()
        keys = {(p["metadata"].get("namespace", ""), p["metadata"]["name"]) for p in self.pods.snapshot()} if changed is None else changed | self._retry
        self._retry = set()
        todo = sorted(keys)
        for done, key in enumerate(todo):
            pod = self.pods.get(*key)
            if pod is None:
                continue
            meta = pod["metadata"]
            if (pod.get("spec") or {}).get("schedulerName") != self.scheduler_name:
                continue
            if (meta.get("annotations") or {}).get(GROUP_NAME) or meta.get("deletionTimestamp"):
                continue
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            try:
                self._adopt(pod)
            except kubernetes.client.ApiException as err:
                log.warning("pod %s/%s: HTTP %s %s", meta["namespace"], meta["name"], err.status, err.reason)
                self._retry.add(key)
            except BaseException:
                self._retry.update(todo[done:])  # the next pass takes up where this one failed
                raise

    def _release_scaled_to_zero(self) -> None:
        """Upstream: addReplicaSet and addStatefulSet delete `podgroup-<uid>` when the owner's
        spec.replicas is 0."""
        for store in (self.replicasets, self.statefulsets):
            for owner in store.snapshot():
                if int((owner.get("spec") or {}).get("replicas", 1)) != 0:
                    continue
                meta = owner["metadata"]
                name = f"podgroup-{meta['uid']}"
                if self.podgroups.get(meta["namespace"], name) is None:
                    continue
                try:
                    self.custom.delete_namespaced_custom_object(*SCHEDULING, meta["namespace"], "podgroups", name)
                except kubernetes.client.ApiException as err:
                    if err.status != 404:
                        log.warning("podgroup %s/%s: HTTP %s %s", meta["namespace"], name, err.status, err.reason)
                        continue
                self.podgroups.forget(meta["namespace"], name)

    def _controller_owner(self, pod: dict[str, Any]) -> dict[str, Any] | None:
        return next((o for o in pod["metadata"].get("ownerReferences") or [] if o.get("controller")), None)

    def _upper_annotations(self, pod: dict[str, Any], owner: dict[str, Any] | None) -> dict[str, str]:
        """The annotations of the workload above the pod (a ReplicaSet and its Deployment, a Job, a
        StatefulSet, a DaemonSet: upstream's getAnnotationsFromUpperRes)."""
        if owner is None:
            return {}
        if owner["uid"] in self._owner_annotations:
            return self._owner_annotations[owner["uid"]]
        ns = pod["metadata"]["namespace"]
        annotations: dict[str, str] = {}
        try:
            if owner["kind"] == "ReplicaSet":
                rs = _meta(self.apps.read_namespaced_replica_set(owner["name"], ns))
                annotations = dict(rs.annotations or {})
                top = next((o for o in rs.owner_references or [] if o.controller), None)
                if top is not None and top.kind == "Deployment":
                    annotations = {**dict(_meta(self.apps.read_namespaced_deployment(top.name, ns)).annotations or {}), **annotations}
            elif owner["kind"] == "Job":
                annotations = dict(_meta(self.batch.read_namespaced_job(owner["name"], ns)).annotations or {})
            elif owner["kind"] == "StatefulSet":
                annotations = dict(_meta(self.apps.read_namespaced_stateful_set(owner["name"], ns)).annotations or {})
            elif owner["kind"] == "DaemonSet":
                annotations = dict(_meta(self.apps.read_namespaced_daemon_set(owner["name"], ns)).annotations or {})
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
        self._owner_annotations[owner["uid"]] = annotations
        return annotations

    def _adopt(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        owner = self._controller_owner(pod)
        name = f"podgroup-{owner['uid'] if owner else meta['uid']}"
        if self.podgroups.get(meta["namespace"], name) is None:
            upper = self._upper_annotations(pod, owner)
            try:
                min_member = max(1, int(upper.get(MIN_MEMBER, "1")))
            except ValueError:
                min_member = 1
            spec: dict[str, Any] = {
                "minMember": min_member,
                # minMember pods of this one's shape, in quota usage (Upstream: buildPodGroupFromPod).
                "minResources": quota.as_resource_list(quota.times(quota.pod_usage(pod.get("spec") or {}), min_member)),
                "queue": (meta.get("annotations") or {}).get(QUEUE_NAME) or upper.get(QUEUE_NAME) or "default",
            }
            if (pod.get("spec") or {}).get("priorityClassName"):
                spec["priorityClassName"] = pod["spec"]["priorityClassName"]
            topology = topology_from_pod(meta.get("annotations") or {}) if self.network_topology else None
            if topology is not None:
                spec["networkTopology"] = topology
            refs = [owner] if owner else [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"], "controller": True}]
            annotations, labels = podgroup_metadata(meta, upper)
            body = {
                "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": name, "namespace": meta["namespace"], "ownerReferences": refs, "annotations": annotations, "labels": labels},
                "spec": spec, "status": {"phase": "Pending"},
            }
            try:
                created = self.custom.create_namespaced_custom_object(*SCHEDULING, meta["namespace"], "podgroups", body)
                self.podgroups.put(cast(dict[str, Any], created))
            except kubernetes.client.ApiException as err:
                if err.status != 409:
                    raise
        self.core.patch_namespaced_pod(meta["name"], meta["namespace"], {"metadata": {"annotations": {GROUP_NAME: name}}})


def podgroup_metadata(pod_meta: dict[str, Any], upper: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """A native pod's PodGroup annotations and labels: the owners' `volcano.sh/` annotations,
    then the pod's own that the scheduler reads on a PodGroup. Upstream: buildPodGroupFromPod."""
    pod_annotations = pod_meta.get("annotations") or {}
    pod_labels = pod_meta.get("labels") or {}
    annotations = {k: str(v) for k, v in upper.items() if k.startswith(INHERITED_PREFIX)}
    annotations.update({k: str(pod_annotations[k]) for k in (PREEMPTABLE, COOLDOWN_TIME, REVOCABLE_ZONE) if k in pod_annotations})
    for key in (JDB_MIN_AVAILABLE, JDB_MAX_UNAVAILABLE):
        if key in pod_annotations:
            annotations[key] = str(pod_annotations[key])
            break
    labels = {k: str(pod_labels[k]) for k in (PREEMPTABLE, COOLDOWN_TIME) if k in pod_labels}
    return annotations, labels


def topology_from_pod(annotations: dict[str, Any]) -> dict[str, Any] | None:
    """The network topology a native pod asks for by annotation, None without either key: mode
    hard or soft (hard when absent or not one of them), highestTierAllowed when a whole number.
    Upstream: parseNetworkTopologyFromPod."""
    if TOPOLOGY_MODE not in annotations and TOPOLOGY_HIGHEST_TIER not in annotations:
        return None
    mode = str(annotations.get(TOPOLOGY_MODE, "hard")).lower()
    topology: dict[str, Any] = {"mode": mode if mode in ("hard", "soft") else "hard"}
    tier = str(annotations.get(TOPOLOGY_HIGHEST_TIER, "")).strip()
    if tier.lstrip("-").isdigit():
        topology["highestTierAllowed"] = int(tier)
    elif tier:
        log.warning("%s %r is not a whole number: the PodGroup gets no highest tier", TOPOLOGY_HIGHEST_TIER, tier)
    return topology


def _meta(obj: Any) -> kubernetes.client.V1ObjectMeta:
    """A typed object's metadata: the API always sends it, though the client's model allows None."""
    meta: kubernetes.client.V1ObjectMeta | None = obj.metadata
    return meta if meta is not None else kubernetes.client.V1ObjectMeta()
