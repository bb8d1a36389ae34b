"""Watch-fed stores: the reference's only way of reading the cluster (no reads per pod or cycle).

Each store lists once, then follows a watch from that resourceVersion, and lists again when the
watch expires. Every change sets a shared `changed` event so the loops react promptly.

A loop records its own writes at once (`put`). Such a write can be answered after the watch has
already reported the object deleted (a PodGroup status written while the scenario's cleanup
deletes it, a pod evicted and gone before the eviction is noted): the store remembers recent
deletions, so a late write never brings a deleted object back to haunt later cycles.

A store reads either through the lean REST path (RestSource: the scheduler's stores, whose
process then never loads the official client and its models) or through an official client's
list function (the controllers'); the official client is imported only where the second is used.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import urllib.parse
from typing import TYPE_CHECKING, Any, Callable, Iterator

from reference_scheduler.kube import rest

if TYPE_CHECKING:
    import kubernetes

log = logging.getLogger(__name__)
Key = tuple[str, str]
WATCH_TIMEOUT_S = 30
# How many recent deletions a store remembers: far more than can be in flight at once.
TOMBSTONES = 10000


class RestSource:
    """A collection listed and watched through the lean REST path (kube/rest.py): the answer's
    JSON read straight into dicts, without the official client's models or its line reader.
    The scheduler's stores use it; a Store also takes an official client's list function."""

    def __init__(self, client: rest.Rest, path: str) -> None:
        self.client = client
        self.path = path

    def list(self) -> dict[str, Any]:
        answer: dict[str, Any] = json.loads(self.client.request("GET", self.path))
        return answer

    def watch(self, version: str, timeout_s: int) -> Iterator[dict[str, Any]]:
        """Events from `version` on; the server ends the stream after `timeout_s`."""
        query = urllib.parse.urlencode({"watch": "true", "resourceVersion": version, "timeoutSeconds": timeout_s})
        for line in self.client.lines(f"{self.path}?{query}"):
            yield json.loads(line)


def _status(err: Exception) -> int | None:
    """The HTTP status of an API error from either client (both carry it as `status`), None for
    anything else."""
    status = getattr(err, "status", None)
    return status if isinstance(status, int) else None


class Changes:
    """The keys of a store's objects that changed since its consumer last took them: lets a loop
    look at what changed instead of every object on every pass. Each consumer has its own
    (Store.changes()); a relist, or a consumer that has not taken any yet, means everything."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: set[Key] = set()
        self._everything = True

    def mark(self, key: Key) -> None:
        with self._lock:
            self._keys.add(key)

    def mark_everything(self) -> None:
        with self._lock:
            self._everything = True

    def take(self) -> set[Key] | None:
        """The keys changed since the last take, or None: look at every object."""
        with self._lock:
            keys, everything = self._keys, self._everything
            self._keys, self._everything = set(), False
        return None if everything else keys


class Store:
    def __init__(self, name: str, lister: Callable[..., Any] | RestSource, changed: threading.Event, on_delete: Callable[[dict[str, Any]], None] | None = None, optional: bool = False) -> None:
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
        self._consumers: list[Changes] = []

    def changes(self) -> Changes:
        """A new consumer's feed of changed keys (see Changes)."""
        feed = Changes()
        with self.lock:
            self._consumers.append(feed)
        return feed

    def _mark(self, key: Key) -> None:
        """Tell every consumer the object under `key` changed (lock held)."""
        for feed in self._consumers:
            feed.mark(key)

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
            self._mark((namespace, name))

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
                self._mark(key)

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
                current = self.items.get(key)
                if current is not None and int(meta.get("resourceVersion", 0)) < int(current["metadata"].get("resourceVersion", 0)):
                    # The watch is behind our own write (put): this event is older than the copy
                    # we hold, and taking it would roll the object back to a state it has left.
                    return
                self.items[key] = obj
            self._mark(key)
        if kind == "DELETED" and self.on_delete is not None:
            self.on_delete(obj)
        self.changed.set()

    def _run(self) -> None:
        version: str | None = None
        while not self._stop.is_set():
            try:
                if version is None:
                    data = self.lister.list() if isinstance(self.lister, RestSource) else json.loads(self.lister(_preload_content=False).data)
                    version = data["metadata"]["resourceVersion"]
                    with self.lock:
                        listed = {(i["metadata"].get("namespace", ""), i["metadata"]["name"]): i for i in data.get("items") or []}
                        # What the list no longer has was deleted while no watch was following.
                        for key in self.items.keys() - listed.keys():
                            self._remember_deletion(key, int(version))
                        self.items = listed
                        for feed in self._consumers:
                            feed.mark_everything()
                    self.synced.set()
                    self.changed.set()
                for event in self._events(version):
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
            except Exception as err:  # an API error, an expired watch, a dropped connection: list again
                if _status(err) == 404 and self.optional:
                    if not self.synced.is_set():
                        log.warning("informer %s: the API server does not serve it (CRD not installed?); treating it as empty", self.name)
                        self.synced.set()
                    version = None
                    self._stop.wait(10)
                    continue
                log.debug("informer %s: %s; relisting", self.name, err)
                version = None
                self._stop.wait(0.5)


    def _events(self, version: str) -> Iterator[dict[str, Any]]:
        if isinstance(self.lister, RestSource):
            return self.lister.watch(version, WATCH_TIMEOUT_S)
        import kubernetes  # the official client's stores only (see the module's docstring)

        return iter(kubernetes.watch.Watch().stream(self.lister, resource_version=version, timeout_seconds=WATCH_TIMEOUT_S, deserialize=False))


def core_lister(api: kubernetes.client.ApiClient, plural: str) -> Callable[..., Any]:
    import kubernetes  # the official client's stores only (see the module's docstring)

    core = kubernetes.client.CoreV1Api(api)
    scheduling = kubernetes.client.SchedulingV1Api(api)
    apps = kubernetes.client.AppsV1Api(api)
    listers: dict[str, Callable[..., Any]] = {
        "pods": core.list_pod_for_all_namespaces,
        "nodes": core.list_node,
        "events": core.list_event_for_all_namespaces,
        "priorityclasses": scheduling.list_priority_class,
        "replicasets": apps.list_replica_set_for_all_namespaces,
        "statefulsets": apps.list_stateful_set_for_all_namespaces,
    }
    return listers[plural]


def custom_lister(api: kubernetes.client.ApiClient, group: str, version: str, plural: str) -> Callable[..., Any]:
    import kubernetes  # the official client's stores only (see the module's docstring)

    custom = kubernetes.client.CustomObjectsApi(api)

    def lister(**kwargs: Any) -> Any:
        return custom.list_cluster_custom_object(group, version, plural, **kwargs)

    lister.__doc__ = custom.list_cluster_custom_object.__doc__
    return lister
