"""A stand-in for the job controller around one `sync.JobSync` (the `sync.Controller` protocol):
in-memory caches, and API clients that record each write and answer as an API server would,
so a sync runs whole without a cluster."""

from __future__ import annotations

import copy
import dataclasses
import threading
import types
from typing import Any

import kubernetes

from reference_scheduler.controllers.job import sync
from reference_scheduler.controllers.job.features import FULL, Features
from tests.reference.builders import store

Obj = dict[str, Any]


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386, as the API server applies a merge patch: null removes a key."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = apply_merge_patch(out.get(key), value)
    return out


@dataclasses.dataclass
class Writes:
    """What a sync asked of the API, in order, as (verb, kind, name)."""

    calls: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)

    def of(self, verb: str, kind: str) -> list[str]:
        return [name for v, k, name in self.calls if (v, k) == (verb, kind)]


class FakeCore:
    def __init__(self, writes: Writes) -> None:
        self.writes = writes
        self.api_client = types.SimpleNamespace(sanitize_for_serialization=lambda obj: obj)
        # PersistentVolumeClaims by name: those the case starts with and those the sync creates.
        self.claims: dict[str, Obj] = {}

    def read_namespaced_persistent_volume_claim(self, name: str, namespace: str) -> Obj:
        if name not in self.claims:
            raise kubernetes.client.ApiException(status=404, reason="Not Found")
        return self.claims[name]

    def create_namespaced_persistent_volume_claim(self, namespace: str, body: Obj) -> Obj:
        self.writes.calls.append(("create", "PersistentVolumeClaim", body["metadata"]["name"]))
        self.claims[body["metadata"]["name"]] = copy.deepcopy(body)
        return body

    def create_namespaced_pod(self, namespace: str, body: Obj) -> Obj:
        self.writes.calls.append(("create", "Pod", body["metadata"]["name"]))
        return body

    def delete_namespaced_pod(self, name: str, namespace: str, grace_period_seconds: int = 0) -> None:
        self.writes.calls.append(("delete", "Pod", name))


class FakeCustom:
    """Jobs, PodGroups and Commands. A PodGroup it creates reports `new_podgroup_phase`, the phase
    the scheduler would give it by the time the sync reads it back."""

    def __init__(self, writes: Writes, new_podgroup_phase: str) -> None:
        self.writes = writes
        self.new_podgroup_phase = new_podgroup_phase
        self.objects: dict[tuple[str, str], Obj] = {}

    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, body: Obj) -> Obj:
        self.writes.calls.append(("create", plural, body["metadata"]["name"]))
        created = {**copy.deepcopy(body), "status": {"phase": self.new_podgroup_phase}}
        self.objects[(plural, body["metadata"]["name"])] = created
        return created

    def patch_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str, patch: Obj) -> Obj:
        self.writes.calls.append(("patch", plural, name))
        self.objects[(plural, name)] = apply_merge_patch(self.objects.get((plural, name), {}), patch)
        return self.objects[(plural, name)]

    def patch_namespaced_custom_object_status(self, group: str, version: str, namespace: str, plural: str, name: str, patch: Obj) -> Obj:
        self.writes.calls.append(("patch-status", plural, name))
        self.objects[(plural, name)] = apply_merge_patch(self.objects[(plural, name)], patch)
        return self.objects[(plural, name)]

    def delete_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str, name: str, body: Obj | None = None) -> None:
        self.writes.calls.append(("delete", plural, name))
        self.objects.pop((plural, name), None)


class FakeOwned:
    def __init__(self, writes: Writes) -> None:
        self.writes = writes

    def ensure(self, body: Obj) -> None:
        self.writes.calls.append(("ensure", body["kind"], body["metadata"]["name"]))

    def delete(self, kind: str, namespace: str, name: str) -> None:
        self.writes.calls.append(("delete", kind, name))


class FakeController:
    """The controller's side of one sync. Its memory starts empty, as after a restart, unless
    `synced` says the job already had its first pass."""

    def __init__(self, job: Obj, features: Features = FULL, new_podgroup_phase: str = "Pending", synced: bool = True) -> None:
        self.writes = Writes()
        self.features = features
        self.core = FakeCore(self.writes)
        self.custom = FakeCustom(self.writes, new_podgroup_phase)
        self.custom.objects[("jobs", job["metadata"]["name"])] = copy.deepcopy(job)
        self.owned = FakeOwned(self.writes)
        self.jobs = store("jobs")
        self.podgroups = store("podgroups")
        self.commands = store("commands")
        self.priority_classes = store("priorityclasses")
        self._lock = threading.Lock()
        self._evicted: list[sync.Evicted] = []
        self._our_deletions: set[str] = set()
        self._handled: set[str] = set()
        self._synced: set[str] = {job["metadata"]["uid"]} if synced else set()
        self._pg_phase_seen: dict[str, str] = {}
        self._pg_pending_reported: dict[str, str] = {}
        self._replay: dict[str, tuple[str, Any]] = {}
        self._ensured: dict[str, str] = {}
        self._released: set[str] = set()
        self.events: list[str] = []
        self.wakes: list[float] = []

    def wake_at(self, when: float) -> None:
        self.wakes.append(when)

    def record_event(self, job: Obj, reason: str, message: str, type_: str = "Normal") -> None:
        self.events.append(reason)

    def job_status(self, name: str) -> Obj:
        return self.custom.objects[("jobs", name)].get("status") or {}
