"""`--node-selector key:value` keeps the scheduler to the nodes with one of those labels, as
vc-scheduler's does (pkg/scheduler/cache: updateNodeSelectors, nodeCanAddCache)."""

from __future__ import annotations

from reference_scheduler.scheduler import cache
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
