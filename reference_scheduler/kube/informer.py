"""Watch-fed stores: the reference's only way of reading the cluster (no reads per pod or cycle).

Each store lists once, then follows a watch from that resourceVersion, and lists again when the
watch expires. Every change sets a shared `changed` event so the loops react promptly.

A loop records its own writes at once (`put`). Such a write can be answered after the watch has
already reported the object deleted (a PodGroup status written while the scenario's cleanup
deletes it, a pod evicted and gone before the eviction is noted): the store remembers recent
deletions, so a late write never brings a deleted object back to haunt later cycles.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
from typing import Any, Callable

import kubernetes

log = logging.getLogger(__name__)
Key = tuple[str, str]
WATCH_TIMEOUT_S = 30
# How many recent deletions a store remembers: far more than can be in flight at once.
TOMBSTONES = 10000


class Store:
    def __init__(self, name: str, lister: Callable[..., Any], changed: threading.Event, on_delete: Callable[[dict[str, Any]], None] | None = None, optional: bool = False) -> None:
        self.name = name
        # An optional kind may not be served at all (its CRD not installed): the store then counts
        # as synced and empty, and keeps trying to list it.
        self.optional = optional
        # Called with the last state of an object the watch reports deleted (the job controller
        # turns a deleted pod into a PodEvicted event).
        self.on_delete = on_delete
        self.lister = lister
        self.changed = changed
        self.lock = threading.Lock()
        self.items: dict[Key, dict[str, Any]] = {}
        # Deleted keys and the resourceVersion they were deleted at, oldest first.
        self._deleted: collections.OrderedDict[Key, int] = collections.OrderedDict()
        self.synced = threading.Event()
        self._stop = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._run, name=f"informer-{self.name}", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.items.values())

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self.lock:
            return self.items.get((namespace, name))

    def forget(self, namespace: str, name: str) -> None:
        with self.lock:
            self.items.pop((namespace, name), None)

    def put(self, obj: dict[str, Any]) -> None:
        """Record our own write at once, so the next cycle does not act on a stale copy; unless the
        object was deleted since that copy was made (an object created again under the same name
        has a newer resourceVersion and is taken)."""
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        version = int(meta.get("resourceVersion", 0))
        with self.lock:
            deleted_at = self._deleted.get(key)
            if deleted_at is not None and version <= deleted_at:
                return
            current = self.items.get(key)
            if current is None or version >= int(current["metadata"].get("resourceVersion", 0)):
                self.items[key] = obj

    def _remember_deletion(self, key: Key, version: int) -> None:
        """Remember a deletion (lock held), forgetting the oldest beyond TOMBSTONES."""
        self._deleted[key] = version
        self._deleted.move_to_end(key)
        while len(self._deleted) > TOMBSTONES:
            self._deleted.popitem(last=False)

    def _apply(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        with self.lock:
            if kind == "DELETED":
                self.items.pop(key, None)
                self._remember_deletion(key, int(meta.get("resourceVersion", 0)))
            else:
                self.items[key] = obj
        if kind == "DELETED" and self.on_delete is not None:
            self.on_delete(obj)
        self.changed.set()

    def _run(self) -> None:
        version: str | None = None
        while not self._stop.is_set():
            try:
                if version is None:
                    data = json.loads(self.lister(_preload_content=False).data)
                    version = data["metadata"]["resourceVersion"]
                    with self.lock:
                        listed = {(i["metadata"].get("namespace", ""), i["metadata"]["name"]): i for i in data.get("items") or []}
                        # What the list no longer has was deleted while no watch was following.
                        for key in self.items.keys() - listed.keys():
                            self._remember_deletion(key, int(version))
                        self.items = listed
                    self.synced.set()
                    self.changed.set()
                watcher = kubernetes.watch.Watch()
                for event in watcher.stream(self.lister, resource_version=version, timeout_seconds=WATCH_TIMEOUT_S, deserialize=False):
                    obj = event.get("raw_object") or event["object"]
                    if event["type"] == "ERROR":
                        version = None
                        break
                    if event["type"] == "BOOKMARK":
                        continue
                    version = obj["metadata"]["resourceVersion"]
                    self._apply(event["type"], obj)
                    if self._stop.is_set():
                        break
            except kubernetes.client.ApiException as err:
                if err.status == 404 and self.optional:
                    if not self.synced.is_set():
                        log.warning("informer %s: the API server does not serve it (CRD not installed?); treating it as empty", self.name)
                        self.synced.set()
                    version = None
                    self._stop.wait(10)
                    continue
                log.debug("informer %s: %s; relisting", self.name, err)
                version = None
                self._stop.wait(0.5)
            except Exception as err:  # an expired watch, a dropped connection: list again
                log.debug("informer %s: %s; relisting", self.name, err)
                version = None
                self._stop.wait(0.5)


def core_lister(api: kubernetes.client.ApiClient, plural: str) -> Callable[..., Any]:
    core = kubernetes.client.CoreV1Api(api)
    scheduling = kubernetes.client.SchedulingV1Api(api)
    fn = {
        "pods": core.list_pod_for_all_namespaces,
        "nodes": core.list_node,
        "events": core.list_event_for_all_namespaces,
        "priorityclasses": scheduling.list_priority_class,
    }[plural]
    return fn


def custom_lister(api: kubernetes.client.ApiClient, group: str, version: str, plural: str) -> Callable[..., Any]:
    custom = kubernetes.client.CustomObjectsApi(api)

    def lister(**kwargs: Any) -> Any:
        return custom.list_cluster_custom_object(group, version, plural, **kwargs)

    lister.__doc__ = custom.list_cluster_custom_object.__doc__
    return lister
