"""The PodGroup controller (controllers/podgroup.py) against in-memory stores and recording
stand-ins for the API: the release of a scaled-down workload's PodGroup; and each pass looks only
at the pods that changed and retries those that failed, so a pass with nothing changed sends
nothing to the API server.

Upstream: pkg/controllers/podgroup/pg_controller_handler.go (addReplicaSet, addStatefulSet)."""

from __future__ import annotations

from typing import Any

import kubernetes

from reference_scheduler.controllers import podgroup
from tests.reference.builders import store, watched_pod

Obj = dict[str, Any]


def _owner(kind: str, name: str, uid: str, replicas: int) -> Obj:
    return {"kind": kind, "metadata": {"namespace": "ns", "name": name, "uid": uid, "resourceVersion": "1"}, "spec": {"replicas": replicas}}


def _group(name: str) -> Obj:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": "1"}, "spec": {"minMember": 1}}


class _Deletes:
    def __init__(self) -> None:
        self.deleted: list[str] = []

    def delete_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str) -> None:
        self.deleted.append(name)


def test_a_workload_scaled_to_zero_gives_its_podgroup_up() -> None:
    groups = store("podgroups", _group("podgroup-old-rs"), _group("podgroup-new-rs"), _group("podgroup-sts"), _group("podgroup-bare-pod"))
    controller = podgroup.PodGroupController(kubernetes.client.ApiClient(), store("pods"), groups, "volcano")
    controller.replicasets = store("replicasets", _owner("ReplicaSet", "old", "old-rs", 0), _owner("ReplicaSet", "new", "new-rs", 2))
    controller.statefulsets = store("statefulsets", _owner("StatefulSet", "sts", "sts", 0))
    deletes = _Deletes()
    controller.custom = deletes  # type: ignore[assignment]
    controller.reconcile_all()
    assert sorted(deletes.deleted) == ["podgroup-old-rs", "podgroup-sts"]
    assert sorted(pg["metadata"]["name"] for pg in groups.snapshot()) == ["podgroup-bare-pod", "podgroup-new-rs"]
    # Nothing more to give up the next time round.
    controller.reconcile_all()
    assert len(deletes.deleted) == 2


class _Api:
    """Records the PodGroup controller's calls; refuses a pod's patch while told to."""

    def __init__(self) -> None:
        self.patched: list[str] = []
        self.created: list[str] = []
        self.refuse: set[str] = set()

    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, body: Obj) -> Obj:
        self.created.append(body["metadata"]["name"])
        return {**body, "metadata": {**body["metadata"], "resourceVersion": "1"}}

    def patch_namespaced_pod(self, name: str, namespace: str, body: Obj) -> None:
        if name in self.refuse:
            raise kubernetes.client.ApiException(status=500, reason="refused")
        self.patched.append(name)


def test_the_podgroup_controller_looks_only_at_pods_that_changed_or_failed() -> None:
    pods, groups = store("pods"), store("podgroups")
    controller = podgroup.PodGroupController(kubernetes.client.ApiClient(), pods, groups, "volcano")
    controller.replicasets, controller.statefulsets = store("replicasets"), store("statefulsets")
    api = _Api()
    controller.core = controller.custom = api  # type: ignore[assignment]
    pods._apply("ADDED", watched_pod("bare", 1))
    pods._apply("ADDED", watched_pod("grouped", 2, group="pg"))
    api.refuse = {"bare"}
    controller.reconcile_all()  # the first pass looks at every pod; the patch is refused
    assert api.patched == [] and api.created == ["podgroup-uid-bare"]
    api.refuse = set()
    controller.reconcile_all()  # nothing changed, but the failed pod is tried again
    assert api.patched == ["bare"]
    controller.reconcile_all()  # nothing changed, nothing failed: no call at all
    assert api.patched == ["bare"]
    pods._apply("MODIFIED", watched_pod("bare", 3, group="podgroup-uid-bare"))  # the watch shows it adopted
    pods._apply("ADDED", watched_pod("late", 4))
    controller.reconcile_all()
    assert api.patched == ["bare", "late"]


def test_a_native_podgroup_carries_what_the_scheduler_reads_from_the_pod_and_its_owners() -> None:
    """buildPodGroupFromPod: the owners' volcano.sh/ annotations, then the pod's preemptable,
    cooldown-time, revocable-zone and one JDB annotation and its preemptable and cooldown-time
    labels; parseNetworkTopologyFromPod: mode hard unless soft, the tier when a whole number."""
    pod_meta = {
        "annotations": {"volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "30s", "volcano.sh/jdb-max-unavailable": "1", "scheduling.volcano.sh/queue-name": "q", "other": "x"},
        "labels": {"volcano.sh/cooldown-time": "30s", "app": "a"},
    }
    upper = {"volcano.sh/revocable-zone": "*", "volcano.sh/preemptable": "true", "deployment.kubernetes.io/revision": "1"}
    annotations, labels = podgroup.podgroup_metadata(pod_meta, upper)
    assert annotations == {"volcano.sh/revocable-zone": "*", "volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "30s", "volcano.sh/jdb-max-unavailable": "1"}
    assert labels == {"volcano.sh/cooldown-time": "30s"}
    assert podgroup.topology_from_pod({}) is None
    assert podgroup.topology_from_pod({"volcano.sh/network-topology-highest-tier": "2"}) == {"mode": "hard", "highestTierAllowed": 2}
    assert podgroup.topology_from_pod({"volcano.sh/network-topology-mode": "Soft"}) == {"mode": "soft"}
    assert podgroup.topology_from_pod({"volcano.sh/network-topology-mode": "loose", "volcano.sh/network-topology-highest-tier": "x"}) == {"mode": "hard"}
