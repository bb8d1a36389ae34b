"""The watch-fed store (kube/informer.py) in memory. Its own writes (`Store.put`) against the
deletions its watch reports: a write answered after the object was deleted must not bring it back
(a zombie PodGroup or pod would hold queue or node resources in every later cycle), while an
object created again is taken. And its feed of changed keys (informer.Changes): each consumer is
told what changed since it last looked."""

from __future__ import annotations

from typing import Any

from reference_scheduler.kube import informer
from tests.reference import builders


def obj(version: int, phase: str = "Pending", name: str = "pg") -> dict[str, Any]:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": str(version)}, "status": {"phase": phase}}


def test_a_write_answered_after_the_deletion_is_dropped() -> None:
    s = builders.store("podgroups")
    s._apply("ADDED", obj(5))
    s._apply("DELETED", obj(7))
    s.put(obj(6, "Inqueue"))
    assert s.get("ns", "pg") is None and s.snapshot() == []


def test_an_object_created_again_under_the_same_name_is_taken() -> None:
    s = builders.store("podgroups")
    s._apply("ADDED", obj(5))
    s._apply("DELETED", obj(7))
    s.put(obj(9, "Inqueue"))
    assert s.get("ns", "pg") == obj(9, "Inqueue")


def test_a_newer_write_replaces_and_an_older_one_does_not() -> None:
    s = builders.store("podgroups")
    s._apply("ADDED", obj(5))
    s.put(obj(8, "Inqueue"))
    s.put(obj(6, "Running"))
    assert s.get("ns", "pg") == obj(8, "Inqueue")


def test_a_watch_event_older_than_our_own_write_does_not_roll_the_object_back() -> None:
    """The watch can be behind the store's own write: the event of the copy before it arrives
    after `put`. Taking it would hand the next pass a state the object has left (a Job's status
    written again from it: Running -> Pending in a chaos run)."""
    s = builders.store("podgroups")
    s._apply("ADDED", obj(5))
    s.put(obj(7, "Running"))
    s._apply("MODIFIED", obj(6, "Inqueue"))
    assert s.get("ns", "pg") == obj(7, "Running")
    s._apply("MODIFIED", obj(7, "Running"))
    s._apply("MODIFIED", obj(8, "Completed"))
    assert s.get("ns", "pg") == obj(8, "Completed")


def test_only_recent_deletions_are_remembered(monkeypatch: Any) -> None:
    monkeypatch.setattr(informer, "TOMBSTONES", 3)
    s = builders.store("podgroups")
    for i, name in enumerate("abcd"):
        s._apply("DELETED", obj(10 + i, name=name))
    s.put(obj(1, name="a"))  # its deletion was forgotten: taken as an object never deleted
    s.put(obj(1, name="d"))
    assert s.get("ns", "a") is not None and s.get("ns", "d") is None


def test_each_consumer_is_told_what_changed_since_it_last_looked() -> None:
    store = builders.store("pods")
    first, second = store.changes(), store.changes()
    store._apply("ADDED", builders.watched_pod("a", 1))
    assert first.take() is None, "a consumer that never looked must look at everything"
    store._apply("MODIFIED", builders.watched_pod("a", 2))
    store.put(builders.watched_pod("b", 3))
    store._apply("DELETED", builders.watched_pod("c", 4))
    assert first.take() == {("ns", "a"), ("ns", "b"), ("ns", "c")}
    assert first.take() == set()
    store.put(builders.watched_pod("a", 1))  # older than what the store holds: not taken, not a change
    assert first.take() == set()
    assert second.take() is None and second.take() == set()
    second.mark_everything()  # what a relist does
    assert second.take() is None
