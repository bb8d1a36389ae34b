"""The Queue controller: state through bus Commands (OpenQueue, CloseQueue), a closing parent
closes its children, and status counts of the queue's PodGroups.

Upstream: pkg/controllers/queue/ (queue_controller_action.go, state/*.go). Closing a queue that
still has PodGroups makes it Closing; it becomes Closed once they are gone. Children closed by
their parent carry `volcano.sh/closed-by-parent: "true"` and reopen with it.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, cast

import kubernetes

from reference_scheduler.kube import informer

log = logging.getLogger(__name__)
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")
BUS = ("bus.volcano.sh", "v1alpha1")
CLOSED_BY_PARENT = "volcano.sh/closed-by-parent"


class QueueController:
    def __init__(self, api: kubernetes.client.ApiClient, changed: threading.Event, podgroups: informer.Store, commands: informer.Store) -> None:
        self.custom = kubernetes.client.CustomObjectsApi(api)
        self.queues = informer.Store("queues", informer.custom_lister(api, *SCHEDULING, "queues"), changed)
        self.podgroups = podgroups
        self.commands = commands

    def reconcile_all(self) -> None:
        queues = {q["metadata"]["name"]: q for q in self.queues.snapshot()}
        wanted: dict[str, str] = {}
        for cmd in self.commands.snapshot():
            target = cmd.get("target") or {}
            if target.get("kind") != "Queue" or cmd.get("action") not in ("OpenQueue", "CloseQueue"):
                continue
            try:
                self.custom.delete_namespaced_custom_object(*BUS, cmd["metadata"]["namespace"], "commands", cmd["metadata"]["name"])
            except kubernetes.client.ApiException as err:
                if err.status != 404:
                    raise
            self.commands.forget(cmd["metadata"]["namespace"], cmd["metadata"]["name"])
            wanted[target.get("name", "")] = "Open" if cmd["action"] == "OpenQueue" else "Closed"
        groups: dict[str, list[dict[str, Any]]] = {}
        for pg in self.podgroups.snapshot():
            groups.setdefault((pg.get("spec") or {}).get("queue") or "default", []).append(pg)
        # Parents before children, so a child sees its parent's new state in the same pass.
        for name in sorted(queues, key=lambda n: _depth(queues, n)):
            try:
                self._sync(queues, name, wanted.get(name), groups.get(name, []))
            except kubernetes.client.ApiException as err:
                log.warning("queue %s: HTTP %s %s", name, err.status, err.reason)

    def _sync(self, queues: dict[str, dict[str, Any]], name: str, command: str | None, groups: list[dict[str, Any]]) -> None:
        queue = queues[name]
        status = dict(queue.get("status") or {})
        state = status.get("state") or "Open"
        annotations = dict(queue["metadata"].get("annotations") or {})
        parent = queues.get((queue.get("spec") or {}).get("parent") or "")
        parent_state = ((parent or {}).get("status") or {}).get("state") or "Open"
        if command == "Closed" or (command is None and state in ("Closing", "Closed")):
            state = "Closing" if groups else "Closed"
        elif command == "Open":
            if parent_state in ("Closing", "Closed"):
                log.warning("queue %s stays closed: its parent %s is %s; open the parent first", name, parent["metadata"]["name"] if parent else "", parent_state)
            else:
                state = "Open"
                annotations.pop(CLOSED_BY_PARENT, None)
        if parent is not None and parent_state in ("Closing", "Closed") and state == "Open":
            state = "Closing" if groups else "Closed"
            annotations[CLOSED_BY_PARENT] = "true"
        elif parent is not None and parent_state == "Open" and annotations.get(CLOSED_BY_PARENT) == "true":
            state = "Open"
            annotations.pop(CLOSED_BY_PARENT, None)
        counts = {"pending": 0, "running": 0, "inqueue": 0, "completed": 0, "unknown": 0}
        for pg in groups:
            phase = ((pg.get("status") or {}).get("phase") or "Pending").lower()
            counts[phase if phase in counts else "unknown"] += 1
        # Only the keys this controller owns are written: `allocated` is the scheduler's, and a
        # copy of it from this controller's cache could be older than what the scheduler wrote.
        new = {**status, **counts, "state": state}
        if annotations != (queue["metadata"].get("annotations") or {}):
            patched = self.custom.patch_cluster_custom_object(*SCHEDULING, "queues", name, {"metadata": {"annotations": {**{k: None for k in (queue["metadata"].get("annotations") or {})}, **annotations}}})
            self.queues.put(cast(dict[str, Any], patched))
        if new != status:
            owned = {key: new[key] for key in (*counts, "state")}
            updated = cast(dict[str, Any], self.custom.patch_cluster_custom_object_status(*SCHEDULING, "queues", name, {"status": owned}))
            self.queues.put(updated)
            queues[name] = updated


def _depth(queues: dict[str, dict[str, Any]], name: str) -> int:
    depth, seen = 0, set()
    current = queues.get(name)
    while current is not None and depth < 64:
        parent = (current.get("spec") or {}).get("parent")
        if not parent or parent in seen or parent == current["metadata"]["name"]:
            break
        seen.add(parent)
        current = queues.get(parent)
        depth += 1
    return depth
