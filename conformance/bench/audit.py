"""When things happened, from the API server's own audit log: each bind, each create, and every
write by which client.

The bench's cluster runs kube-apiserver with POLICY: one line per create, update or patch (node
heartbeats and leases left out), with microsecond timestamps taken by the API server itself. A
watch in the bench would read the same facts late on a loaded machine (the old bench's were 2-13 s
behind); these cost the API server one short JSON line per write, the same for every
implementation and for the ceiling.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import json
import os
import pathlib
from typing import Any, BinaryIO

POLICY: dict[str, Any] = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        # kwok's node heartbeats: thousands a minute at 1,000 nodes and nothing to do with scheduling.
        {"level": "None", "resources": [{"group": "coordination.k8s.io"}, {"group": "", "resources": ["nodes", "nodes/status"]}]},
        {"level": "Metadata", "verbs": ["create", "update", "patch"]},
        {"level": "None"},
    ],
}


def _epoch(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp).timestamp()


def client_of(user_agent: str) -> str:
    """The client's name: the user agent's first product (`vc-scheduler/v1.13.3 (linux/amd64) ...`
    is vc-scheduler)."""
    return user_agent.split("/", 1)[0].split(" ", 1)[0] or "unknown"


@dataclasses.dataclass(frozen=True)
class Write:
    """What kind of write: by which client, which verb, on which resource (with subresource)."""

    client: str
    verb: str
    resource: str


class Log:
    """Reads the audit log as it grows (and as the API server rotates it, every 100 MB by
    default: the rotated files first, then the live one, followed across a rotation) and keeps
    what the bench asks about one namespace."""

    def __init__(self, path: pathlib.Path, namespace: str) -> None:
        self.path = path
        self.namespace = namespace
        self._file: BinaryIO | None = None
        self._partial = b""
        # pod -> when its first successful Binding completed (epoch seconds).
        self.bound_at: dict[str, float] = {}
        # (resource, name) -> when its create completed.
        self.created_at: dict[tuple[str, str], float] = {}
        # Every write in the cluster, by kind, with its completion time, for counts over a window.
        self._writes: list[tuple[float, Write]] = []

    def rotated(self) -> list[pathlib.Path]:
        """The files the API server rotated the log into, oldest first (their names carry the time)."""
        return sorted(self.path.parent.glob(f"{self.path.stem}-*{self.path.suffix}"))

    def read(self) -> int:
        """Take in the lines written since the last read; returns how many."""
        count = 0
        if self._file is None:
            if not self.path.exists():
                return 0
            for old in self.rotated():
                count += self._lines(old.read_bytes())
            self._file = open(self.path, "rb")  # kept open, to follow it across rotations
        while True:
            count += self._lines(self._file.read())
            try:
                moved = os.stat(self.path).st_ino != os.fstat(self._file.fileno()).st_ino
            except FileNotFoundError:
                return count  # between the rename and the new file: the next read follows
            if not moved:
                return count
            # Rotated: what was written before the rename is in the file still open; then the new one.
            count += self._lines(self._file.read())
            self._file.close()
            self._file = open(self.path, "rb")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _lines(self, data: bytes) -> int:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()  # the last line may still be being written
        for line in lines:
            if line:
                self._take(json.loads(line))
        return sum(1 for line in lines if line)

    def _take(self, event: dict[str, Any]) -> None:
        ref = event.get("objectRef") or {}
        code = (event.get("responseStatus") or {}).get("code", 0)
        if not 200 <= code < 300:
            return
        when = _epoch(event["stageTimestamp"])
        resource = ref.get("resource", "")
        sub = ref.get("subresource")
        self._writes.append((when, Write(client_of(event.get("userAgent", "")), event.get("verb", ""), f"{resource}/{sub}" if sub else resource)))
        if ref.get("namespace") != self.namespace or event.get("verb") != "create":
            return
        name = ref.get("name", "")
        # A bind is either a pod's binding subresource (client-go's Bind) or the namespace's
        # bindings collection (what the official Python client posts to); both name the pod.
        if (resource == "pods" and sub == "binding") or (resource == "bindings" and not sub):
            self.bound_at.setdefault(name, when)
        elif not sub:
            self.created_at.setdefault((resource, name), when)

    def writes(self, since: float, until: float) -> dict[Write, int]:
        """How many writes of each kind completed in [since, until]."""
        return dict(collections.Counter(w for when, w in self._writes if since <= when <= until))
