"""A store's feed of changed keys (informer.Changes), and the PodGroup controller that looks only at
the pods it names: each pass adopts what changed and retries what failed, and a pass with nothing
changed sends nothing to the API server. In memory, against recording stand-ins for the API."""

from __future__ import annotations

import threading
from typing import Any

import kubernetes

from reference_scheduler.controllers import podgroup
from reference_scheduler.kube import informer

Obj = dict[str, Any]


def _store(name: str) -> informer.Store:
    return informer.Store(name, lambda **_: None, threading.Event())


def _pod(name: str, version: int, group: str = "") -> Obj:
    annotations = {podgroup.GROUP_NAME: group} if group else {}
    return {
        "metadata": {"namespace": "ns", "name": name, "uid": f"uid-{name}", "resourceVersion": str(version), "annotations": annotations},
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Pending"},
    }


def test_each_consumer_is_told_what_changed_since_it_last_looked() -> None:
    store = _store("pods")
    first, second = store.changes(), store.changes()
    store._apply("ADDED", _pod("a", 1))
    assert first.take() is None, "a consumer that never looked must look at everything"
    store._apply("MODIFIED", _pod("a", 2))
    store.put(_pod("b", 3))
    store._apply("DELETED", _pod("c", 4))
    assert first.take() == {("ns", "a"), ("ns", "b"), ("ns", "c")}
    assert first.take() == set()
    store.put(_pod("a", 1))  # older than what the store holds: not taken, not a change
    assert first.take() == set()
    assert second.take() is None and second.take() == set()
    second.mark_everything()  # what a relist does
    assert second.take() is None


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
    pods, groups = _store("pods"), _store("podgroups")
    controller = podgroup.PodGroupController(kubernetes.client.ApiClient(), pods, groups, "volcano")
    controller.replicasets, controller.statefulsets = _store("replicasets"), _store("statefulsets")
    api = _Api()
    controller.core = controller.custom = api  # type: ignore[assignment]
    pods._apply("ADDED", _pod("bare", 1))
    pods._apply("ADDED", _pod("grouped", 2, group="pg"))
    api.refuse = {"bare"}
    controller.reconcile_all()  # the first pass looks at every pod; the patch is refused
    assert api.patched == [] and api.created == ["podgroup-uid-bare"]
    api.refuse = set()
    controller.reconcile_all()  # nothing changed, but the failed pod is tried again
    assert api.patched == ["bare"]
    controller.reconcile_all()  # nothing changed, nothing failed: no call at all
    assert api.patched == ["bare"]
    pods._apply("MODIFIED", _pod("bare", 3, group="podgroup-uid-bare"))  # the watch shows it adopted
    pods._apply("ADDED", _pod("late", 4))
    controller.reconcile_all()
    assert api.patched == ["bare", "late"]
