"""The scheduler's cache (scheduler/cache.py): `--node-selector key:value` keeps the scheduler to
the nodes with one of those labels, as vc-scheduler's does (pkg/scheduler/cache:
updateNodeSelectors, nodeCanAddCache); and the snapshot leaves out a job whose queue does not
exist (pkg/scheduler/cache/cache.go, Snapshot)."""

from __future__ import annotations

from reference_scheduler.scheduler import cache, cycle_profile
from tests.reference.builders import node


def test_items_are_key_value_pairs_and_malformed_ones_are_ignored() -> None:
    assert cache.parse_node_selector(["type:kwok", " zone : a ", "broken", ":x", "y:"]) == {("type", "kwok"), ("zone", "a")}


def test_any_listed_label_selects_a_node() -> None:
    selector = cache.parse_node_selector(["type:kwok", "zone:a"])
    assert cache.selected(node("n", labels={"type": "kwok"}), selector)
    assert cache.selected(node("n", labels={"zone": "a", "type": "real"}), selector)
    assert not cache.selected(node("n", labels={"type": "real"}), selector)
    assert not cache.selected({"metadata": {"name": "bare"}}, selector)


def test_without_a_selector_every_node_is_scheduled_on() -> None:
    assert cache.selected(node("n"), cache.parse_node_selector([]))


def test_the_snapshot_leaves_out_a_job_whose_queue_does_not_exist() -> None:
    queues = [{"metadata": {"name": name}, "spec": {"weight": 1}} for name in ("root", "default")]
    podgroups = [
        {"metadata": {"namespace": "ns", "name": name, "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"minMember": 1, "queue": queue}, "status": {"phase": "Running"}}
        for name, queue in (("kept", "default"), ("orphan", "deleted-queue"))
    ]
    jobs, _, _ = cycle_profile.MemoryCache([], [], podgroups, queues).snapshot()
    assert sorted(job.name for job in jobs.values()) == ["kept"]
