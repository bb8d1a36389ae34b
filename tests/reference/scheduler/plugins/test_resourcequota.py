"""resourcequota on in-memory snapshots: which jobs are enqueued against the namespace's
ResourceQuotas (scenarios/resourcequota proves the same against an API server).

Upstream: pkg/scheduler/plugins/resourcequota/resourcequota.go."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.scheduler.plugins import resourcequota
from tests.reference.builders import node, podgroup
from tests.reference.scheduler_harness import Case, run_case


def quota(name: str, hard: dict[str, str], used: dict[str, str], namespace: str = "ns") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"hard": hard}, "status": {"hard": hard, "used": used}}


def pending_group(name: str, min_resources: dict[str, str]) -> dict[str, Any]:
    group = podgroup(name, 1, "Pending")
    group["spec"]["minResources"] = min_resources
    return group


QUOTA_ENQUEUE = """
actions: "enqueue"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}, {name: resourcequota}]
"""
NODES = [node("n", "16")]
QUOTA_CASES = [
    Case("room-left-enqueues", NODES, [], [pending_group("pg", {"requests.cpu": "2", "cpu": "2"})], QUOTA_ENQUEUE,
         quotas=[quota("q", {"requests.cpu": "4"}, {"requests.cpu": "2"})], phases={"pg": "Inqueue"}),
    Case("no-room-stays-pending", NODES, [], [pending_group("pg", {"requests.cpu": "3", "cpu": "3"})], QUOTA_ENQUEUE,
         quotas=[quota("q", {"requests.cpu": "4"}, {"requests.cpu": "2"})], phases={"pg": "Pending"}),
    # Jobs enqueued earlier in the cycle count against the quota: only one of two fits.
    Case("earlier-jobs-of-the-cycle-count", NODES, [], [pending_group("a", {"requests.cpu": "2"}), pending_group("b", {"requests.cpu": "2"})], QUOTA_ENQUEUE,
         quotas=[quota("q", {"requests.cpu": "3"}, {"requests.cpu": "0"})], phases={"a": "Inqueue", "b": "Pending"}),
    Case("other-namespaces-quota-ignored", NODES, [], [pending_group("pg", {"requests.cpu": "3"})], QUOTA_ENQUEUE,
         quotas=[quota("q", {"requests.cpu": "1"}, {"requests.cpu": "1"}, namespace="elsewhere")], phases={"pg": "Inqueue"}),
    Case("resource-not-in-hard-ignored", NODES, [], [pending_group("pg", {"requests.cpu": "3", "count/pods": "1"})], QUOTA_ENQUEUE,
         quotas=[quota("q", {"requests.memory": "1Gi"}, {"requests.memory": "1Gi"})], phases={"pg": "Inqueue"}),
]


@pytest.mark.parametrize("case", QUOTA_CASES, ids=lambda c: c.name)
def test_resourcequota(case: Case) -> None:
    run_case(case)


def test_resourcequota_event() -> None:
    cache = run_case(QUOTA_CASES[1])
    assert ("pg", resourcequota.REASON, "resource quota insufficient, requested: map[requests.cpu:3], used: map[requests.cpu:2], limited: map[requests.cpu:4]") in cache.events
