"""The watch-fed store's own writes (`Store.put`) against the deletions its watch reports: a
write answered after the object was deleted must not bring it back (a zombie PodGroup or pod would
hold queue or node resources in every later cycle), while an object created again is taken."""

from __future__ import annotations

import threading
from typing import Any

from reference_scheduler.kube import informer


def obj(version: int, phase: str = "Pending", name: str = "pg") -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": str(version)}, "status": {"phase": phase}}


def store() -> informer.Store:
    return informer.Store("podgroups", lambda **_: None, threading.Event())


def test_a_write_answered_after_the_deletion_is_dropped() -> None:
    s = store()
    s._apply("ADDED", obj(5))
    s._apply("DELETED", obj(7))
    s.put(obj(6, "Inqueue"))
    assert s.get("ns", "pg") is None and s.snapshot() == []


def test_an_object_created_again_under_the_same_name_is_taken() -> None:
    s = store()
    s._apply("ADDED", obj(5))
    s._apply("DELETED", obj(7))
    s.put(obj(9, "Inqueue"))
    assert s.get("ns", "pg") == obj(9, "Inqueue")


def test_a_newer_write_replaces_and_an_older_one_does_not() -> None:
    s = store()
    s._apply("ADDED", obj(5))
    s.put(obj(8, "Inqueue"))
    s.put(obj(6, "Running"))
    assert s.get("ns", "pg") == obj(8, "Inqueue")


def test_only_recent_deletions_are_remembered(monkeypatch: Any) -> None:
    monkeypatch.setattr(informer, "TOMBSTONES", 3)
    s = store()
    for i, name in enumerate("abcd"):
        s._apply("DELETED", obj(10 + i, name=name))
    s.put(obj(1, name="a"))  # its deletion was forgotten: taken as an object never deleted
    s.put(obj(1, name="d"))
    assert s.get("ns", "a") is not None and s.get("ns", "d") is None
