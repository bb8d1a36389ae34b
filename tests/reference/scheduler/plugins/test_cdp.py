"""cdp on in-memory snapshots: a pod still in its cooldown after being scheduled is no victim
(scenarios/cdp proves the same against an API server).

Upstream: pkg/scheduler/plugins/cdp/cdp.go."""

from __future__ import annotations

import pytest

from reference_scheduler.scheduler.plugins import cdp
from tests.reference.builders import node, pod, podgroup, running_since
from tests.reference.scheduler_harness import Case, run_case

CDP_PREEMPT = """
actions: "allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: cdp}]
- plugins: [{name: predicates}]
"""
LOW = dict(priority="low")
HIGH = dict(priority="high")
CDP_CASES = [
    Case("cooling-pod-is-no-victim", [node("n", "2")],
         [running_since("a", "low", "n", labels={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=5), running_since("b", "low", "n", annotations={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=5), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], CDP_PREEMPT, binds={}, evictions=[]),
    Case("cooled-down-pod-is-a-victim", [node("n", "2")],
         [running_since("a", "low", "n", labels={cdp.COOLDOWN_KEY: "10s"}, scheduled_ago=60), running_since("b", "low", "n", labels={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=5), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], CDP_PREEMPT, binds={}, evictions=["a"]),
    Case("unparsable-cooldown-protects-nothing", [node("n", "2")],
         [running_since("a", "low", "n", labels={cdp.COOLDOWN_KEY: "soon"}, scheduled_ago=1), running_since("b", "low", "n", labels={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=1), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], CDP_PREEMPT, binds={}, evictions=["a"]),
]


@pytest.mark.parametrize("case", CDP_CASES, ids=lambda c: c.name)
def test_cdp(case: Case) -> None:
    run_case(case)
