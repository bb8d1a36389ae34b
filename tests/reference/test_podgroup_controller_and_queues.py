"""The PodGroup controller's release of a scaled-down workload's PodGroup, and the scheduler's
snapshot leaving out a job whose queue does not exist, against in-memory stores.

Upstream: pkg/controllers/podgroup/pg_controller_handler.go (addReplicaSet, addStatefulSet),
pkg/scheduler/cache/cache.go (Snapshot)."""

from __future__ import annotations

import threading
from typing import Any

import kubernetes

from reference_scheduler.api import resource
from reference_scheduler.controllers import podgroup
from reference_scheduler.kube import informer
from reference_scheduler.scheduler import cycle_profile

Obj = dict[str, Any]


def _store(name: str, *items: Obj) -> informer.Store:
    store = informer.Store(name, lambda **_: None, threading.Event())
    for item in items:
        store._apply("ADDED", item)
    return store


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
    groups = _store("podgroups", _group("podgroup-old-rs"), _group("podgroup-new-rs"), _group("podgroup-sts"), _group("podgroup-bare-pod"))
    controller = podgroup.PodGroupController(kubernetes.client.ApiClient(), _store("pods"), groups, "volcano")
    controller.replicasets = _store("replicasets", _owner("ReplicaSet", "old", "old-rs", 0), _owner("ReplicaSet", "new", "new-rs", 2))
    controller.statefulsets = _store("statefulsets", _owner("StatefulSet", "sts", "sts", 0))
    deletes = _Deletes()
    controller.custom = deletes  # type: ignore[assignment]
    controller.reconcile_all()
    assert sorted(deletes.deleted) == ["podgroup-old-rs", "podgroup-sts"]
    assert sorted(pg["metadata"]["name"] for pg in groups.snapshot()) == ["podgroup-bare-pod", "podgroup-new-rs"]
    # Nothing more to give up the next time round.
    controller.reconcile_all()
    assert len(deletes.deleted) == 2


def test_the_snapshot_leaves_out_a_job_whose_queue_does_not_exist() -> None:
    queues = [{"metadata": {"name": name}, "spec": {"weight": 1}} for name in ("root", "default")]
    podgroups = [
        {"metadata": {"namespace": "ns", "name": name, "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"minMember": 1, "queue": queue}, "status": {"phase": "Running"}}
        for name, queue in (("kept", "default"), ("orphan", "deleted-queue"))
    ]
    jobs, _, _ = cycle_profile.MemoryCache([], [], podgroups, queues).snapshot()
    assert sorted(job.name for job in jobs.values()) == ["kept"]


def test_quota_forms_in_min_resources_are_no_resource() -> None:
    parsed = resource.Resource.from_list({"cpu": "2", "requests.cpu": "2", "limits.cpu": "2", "count/pods": "2", "pods": "2", "nvidia.com/gpu": "1", "requests.nvidia.com/gpu": "1"})
    assert parsed.values == {"cpu": 2000.0, "nvidia.com/gpu": 1.0}
