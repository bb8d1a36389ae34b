"""The recorder: watches every kind a scenario can observe and keeps the current state and the
timeline of changes. Judging code reads snapshots under its lock and waits on its condition.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Sequence

import kubernetes

from conformance import results
from conformance.cluster import resources
from conformance.observe import summaries

log = logging.getLogger(__name__)
WATCH_TIMEOUT_S = 5
RETRY_S = 0.5
NOT_SERVED_RETRY_S = 2.0
Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects


@dataclasses.dataclass(frozen=True)
class Change:
    t_s: float
    event: str  # ADDED | MODIFIED | DELETED
    kind: resources.Kind
    key: Key
    obj: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class Remembered:
    """A value a `remember` step noted: one object's (`single`), or one per object of a selection,
    by name (`per_name`); `source` says what it was read from."""

    source: str
    single: Any = None
    per_name: Mapping[str, Any] | None = None


class View:
    """The state at one moment: every observed object by kind and key, and what the scenario's
    steps remembered so far."""

    def __init__(self, objects: Mapping[resources.Kind, Mapping[Key, Mapping[str, Any]]], t_s: float, memory: Mapping[str, Remembered] | None = None) -> None:
        self._objects = objects
        self.t_s = t_s
        self.memory: Mapping[str, Remembered] = memory if memory is not None else {}

    def of(self, kind: resources.Kind) -> Mapping[Key, Mapping[str, Any]]:
        return self._objects.get(kind, {})

    def named(self, kind: resources.Kind, name: str) -> Mapping[str, Any] | None:
        for (_, obj_name), obj in self.of(kind).items():
            if obj_name == name:
                return obj
        return None


class Recorder:
    def __init__(self, client: resources.Client, namespace: str, kinds: Sequence[resources.Kind], clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.namespace = namespace
        self.kinds = tuple(dict.fromkeys(kinds))
        self.clock = clock
        self.t0 = clock()
        # The wall clock (seconds since the epoch) at t0: an API timestamp is placed on the
        # recorder's time line by it (wall_to_t).
        self.wall_t0 = time.time()
        self.cond = threading.Condition()
        self.version = 0
        self.changes: list[Change] = []
        self.steps: list[results.TimelineEntry] = []
        self.errors: list[str] = []
        # Values `remember` steps noted, by name: the scenario's own record, read by the judge.
        self.memory: dict[str, Remembered] = {}
        self._objects: dict[resources.Kind, dict[Key, Mapping[str, Any]]] = {k: {} for k in self.kinds}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # --- lifecycle --------------------------------------------------------------------------------
    def start(self, ready_timeout_s: float = 30.0) -> None:
        """Start one watch per kind; return once each has listed what exists."""
        ready = []
        for kind in self.kinds:
            listed = threading.Event()
            ready.append((kind, listed))
            thread = threading.Thread(target=self._watch, args=(kind, listed), name=f"watch-{kind.kind}", daemon=True)
            thread.start()
            self._threads.append(thread)
        deadline = self.clock() + ready_timeout_s
        for kind, listed in ready:
            if not listed.wait(max(0.0, deadline - self.clock())):
                raise TimeoutError(f"the observer could not list {kind.api_version} {kind.kind} within {ready_timeout_s:.0f}s: {self.errors[-3:]}")

    def stop(self) -> None:
        """Stop watching. Threads end at their next event or watch timeout; nothing waits for them."""
        self._stop.set()

    def now(self) -> float:
        return self.clock() - self.t0

    def wall_to_t(self, epoch_s: float) -> float:
        """A wall-clock moment (an API timestamp) on the recorder's time line."""
        return epoch_s - self.wall_t0

    # --- reading ----------------------------------------------------------------------------------
    def view(self) -> View:
        """A consistent snapshot; call with `cond` held when judging."""
        return View({k: dict(v) for k, v in self._objects.items()}, self.now(), dict(self.memory))

    def cursor(self) -> Cursor:
        """Every state from now on, each in turn (call with `cond` held): a judge that waits on the
        condition may wake after several changes, and must still see each state between."""
        return Cursor(self)

    def mark(self, label: str, detail: Mapping[str, Any] | None = None) -> None:
        """Put a step into the timeline, so a reader sees what the scenario did when."""
        with self.cond:
            self.steps.append(results.TimelineEntry(self.now(), "STEP", "Step", self.namespace, label, dict(detail or {})))

    def history(self, since_s: float | None = None) -> Iterator[View]:
        """Replays every recorded state in order (for ordering and sequence checks). With
        `since_s`, from that moment: first the state current then (timed `since_s`), then each
        later one. A yielded view is valid until the next is asked for."""
        with self.cond:
            changes = list(self.changes)
            memory = dict(self.memory)
        objects: dict[resources.Kind, dict[Key, Mapping[str, Any]]] = {k: {} for k in self.kinds}
        pending_start = since_s is not None
        for change in changes:
            if pending_start and since_s is not None and change.t_s > since_s:
                pending_start = False
                yield View(objects, since_s, memory)
            if change.event == "DELETED":
                objects[change.kind].pop(change.key, None)
            else:
                objects[change.kind][change.key] = change.obj
            if not pending_start:
                yield View(objects, change.t_s, memory)
        if pending_start and since_s is not None:
            yield View(objects, since_s, memory)

    def timeline(self) -> tuple[results.TimelineEntry, ...]:
        with self.cond:
            entries = [
                results.TimelineEntry(c.t_s, c.event, c.kind.kind, c.key[0], c.key[1], summaries.summarize(c.kind.kind, c.obj))
                for c in self.changes
            ]
            entries += self.steps
        return tuple(sorted(entries, key=lambda e: e.t_s))

    # --- watching ---------------------------------------------------------------------------------
    def _apply(self, kind: resources.Kind, event: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "", meta.get("name") or "")
        with self.cond:
            current = self._objects[kind]
            previous = current.get(key)
            if event == "DELETED":
                if previous is None:
                    return
                current.pop(key, None)
            else:
                if previous is not None and (previous.get("metadata") or {}).get("resourceVersion") == meta.get("resourceVersion"):
                    return
                event = "MODIFIED" if previous is not None else "ADDED"
                current[key] = obj
            self.changes.append(Change(self.now(), event, kind, key, obj))
            self.version += 1
            self.cond.notify_all()

    def _relist(self, kind: resources.Kind, lister: Callable[..., Any]) -> str:
        resp = lister(_preload_content=False)
        data = json.loads(resp.data)
        items = data.get("items") or []
        seen = set()
        for item in items:
            item.setdefault("apiVersion", kind.api_version)
            item.setdefault("kind", kind.kind)
            meta = item.get("metadata") or {}
            seen.add((meta.get("namespace") or "", meta.get("name") or ""))
            self._apply(kind, "ADDED", item)
        with self.cond:
            gone = [(key, obj) for key, obj in self._objects[kind].items() if key not in seen]
        for _, obj in gone:
            self._apply(kind, "DELETED", obj)
        return str(data["metadata"]["resourceVersion"])

    def _watch(self, kind: resources.Kind, listed: threading.Event) -> None:
        namespace = self.namespace if kind.namespaced else None
        lister = self.client.lister(kind, namespace)
        version: str | None = None
        while not self._stop.is_set():
            try:
                if version is None:
                    version = self._relist(kind, lister)
                    listed.set()
                watcher = kubernetes.watch.Watch()
                for event in watcher.stream(lister, resource_version=version, timeout_seconds=WATCH_TIMEOUT_S, deserialize=False):
                    # With deserialize=False the client hands over the dict itself as "object".
                    obj = event.get("raw_object") or event["object"]
                    if event["type"] == "ERROR":
                        version = None  # expired: list again
                        break
                    if event["type"] == "BOOKMARK":
                        continue
                    version = obj["metadata"]["resourceVersion"]
                    self._apply(kind, event["type"], obj)
                    if self._stop.is_set():
                        watcher.stop()
                        break
            except kubernetes.client.ApiException as err:
                version = None
                with self.cond:
                    self.errors.append(f"{kind.kind}: HTTP {err.status} {err.reason}")
                if err.status == 404:
                    # The kind is not served (yet): nothing of it can exist, so the list counts as done.
                    listed.set()
                    self._stop.wait(NOT_SERVED_RETRY_S)
                else:
                    self._stop.wait(RETRY_S)
            except Exception as err:  # a dropped connection and the like: list again after a pause
                version = None
                with self.cond:
                    self.errors.append(f"{kind.kind}: {err.__class__.__name__}: {err}")
                log.debug("watch of %s failed", kind.kind, exc_info=True)
                self._stop.wait(RETRY_S)


class Cursor:
    """The recorded states from one moment on, one per change, for a judge that may wake once for
    several changes. Under load the watch threads can apply an object's short-lived state and the
    next one before the judge runs (a Command the controller consumes at once, a phase a Job
    passes through): a judge that read only the state at each wake-up would never see it."""

    def __init__(self, rec: Recorder) -> None:
        self._rec = rec
        self._objects: dict[resources.Kind, dict[Key, Mapping[str, Any]]] = {k: dict(v) for k, v in rec._objects.items()}
        self._next = len(rec.changes)
        self._memory = dict(rec.memory)
        self._t_s = rec.now()

    def current(self) -> View:
        """The state the cursor stands at (at first, the state when it was made)."""
        return View(self._objects, self._t_s, self._memory)

    def advance(self) -> Iterator[View]:
        """Each state recorded since the last call, in order (call with the recorder's `cond`
        held). A yielded view is valid until the next is asked for."""
        changes = self._rec.changes
        while self._next < len(changes):
            change = changes[self._next]
            self._next += 1
            if change.event == "DELETED":
                self._objects[change.kind].pop(change.key, None)
            else:
                self._objects[change.kind][change.key] = change.obj
            self._t_s = change.t_s
            yield View(self._objects, change.t_s, self._memory)
