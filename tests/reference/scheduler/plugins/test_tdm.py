"""tdm on in-memory snapshots: where revocable nodes may be used and when, who may be a victim,
which pods leave a revocable zone once it closes, and which jobs go first (scenarios/tdm proves
the same against an API server).

Upstream: pkg/scheduler/plugins/tdm/tdm.go."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework
from reference_scheduler.scheduler.plugins import tdm
from tests.reference.builders import (
    node,
    pod,
    podgroup,
    queue,
    running_since,
    with_meta,
)
from tests.reference.scheduler_harness import (
    PRIORITY_CLASSES,
    Case,
    FakeCache,
    run_case,
)

LOW = dict(priority="low")
HIGH = dict(priority="high")
ALWAYS_OPEN = "00:00-00:00"
TDM_ALLOCATE = f"""
actions: "enqueue, allocate"
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - {{name: predicates}}
  - name: tdm
    arguments: {{tdm.revocable-zone.rz1: "{ALWAYS_OPEN}"}}
"""
REVOCABLE = {tdm.REVOCABLE_ZONE_KEY: "rz1"}
PREEMPTABLE = {tdm.PREEMPTABLE_KEY: "true"}
TDM_CASES = [
    Case("plain-pod-keeps-off-revocable-node", [node("a-revocable", "4", labels=REVOCABLE), node("b-plain", "2")], [pod("p", "pg", "3")], [podgroup("pg", 1)], TDM_ALLOCATE,
         binds={}, conditions={"pg": ("Unschedulable", "NotEnoughResources", tdm.NOT_ALLOWED)}),
    Case("preemptable-pod-prefers-revocable-node", [node("a-plain", "4"), node("b-revocable", "4", labels=REVOCABLE)], [with_meta(pod("p", "pg"), annotations=PREEMPTABLE)], [podgroup("pg", 1)], TDM_ALLOCATE,
         binds={"p": "b-revocable"}),
    Case("unconfigured-zone-takes-nothing", [node("a-other", "4", labels={tdm.REVOCABLE_ZONE_KEY: "rz9"}), node("b-plain", "4")],
         [with_meta(pod("p", "pg"), annotations={tdm.REVOCABLE_ZONE_KEY: "*"})], [podgroup("pg", 1)], TDM_ALLOCATE, binds={"p": "b-plain"}),
]


@pytest.mark.parametrize("case", TDM_CASES, ids=lambda c: c.name)
def test_tdm(case: Case) -> None:
    run_case(case)


def test_tdm_windows() -> None:
    noon = datetime.datetime(2026, 1, 1, 12, 0, 30)
    zones = tdm.Zones({"day": "8:00-18:00", "night": "22:00-06:00", "all": ALWAYS_OPEN, "bad": "8-18"})
    assert zones.closed_reason("day", noon) is None
    assert zones.closed_reason("night", noon) == "current time beyond revocable zone night:22:00-06:00"
    assert zones.closed_reason("all", noon) is None
    assert zones.closed_reason("bad", noon) is not None
    assert zones.closed_reason("none", noon) == "revocable zone none not support"
    assert tdm.window("22:00-06:00", noon) == (datetime.datetime(2026, 1, 1, 22, 0), datetime.datetime(2026, 1, 2, 6, 0))


def test_tdm_shuffle_evicts_from_closed_zones_within_budget() -> None:
    shuffle = """
actions: "shuffle"
tiers:
- plugins:
  - name: tdm
    arguments: {tdm.revocable-zone.rz1: "01:00-01:01", tdm.evict.period: 1h}
"""
    closed_at = datetime.datetime.now().astimezone().replace(hour=12, minute=0)
    nodes = [node("r-0", "4", labels=REVOCABLE), node("p-0", "4")]
    pods = [running_since(f"w{i}", "pg", "r-0", annotations=PREEMPTABLE) for i in range(3)] + [running_since("x", "pg", "p-0", annotations=PREEMPTABLE)]
    group = podgroup("pg", 1, "Running")
    group["metadata"]["annotations"] = {tdm.JDB_MIN_AVAILABLE: "2"}
    cache = FakeCache(nodes, pods, [group], [queue()], PRIORITY_CLASSES)
    original = tdm.Tdm.__init__

    def at_noon(self: tdm.Tdm, arguments: Any, clock: Any = None) -> None:
        original(self, arguments, clock=lambda: closed_at)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tdm.Tdm, "__init__", at_noon)
        framework.run_cycle(cache, conf_load.parse(shuffle))
        # 4 running, down to 2: two of the three on the revocable node go, none from p-0.
        assert cache.evictions == ["w0", "w1"]
        # Within the evict period nothing more goes.
        cache.evictions.clear()
        framework.run_cycle(cache, conf_load.parse(shuffle))
        assert cache.evictions == []


def test_tdm_budget() -> None:
    job = job_info.JobInfo("ns/pg", "pg", "ns", "default", 1, {}, podgroup("pg", 1, "Running"))
    for i, phase in enumerate(["Running", "Running", "Running", "Pending"]):
        task = job_info.TaskInfo.from_pod(pod(f"t{i}", "pg", node_name="n" if phase == "Running" else "", phase=phase), "ns/pg")
        job.tasks[task.uid] = task
    assert tdm.max_evictions(job) == 1
    job.podgroup["metadata"]["annotations"] = {tdm.JDB_MAX_UNAVAILABLE: "50%"}
    assert tdm.max_evictions(job) == 1  # 2 may be unavailable, 1 (the pending one) already is
    job.podgroup["metadata"]["annotations"] = {tdm.JDB_MIN_AVAILABLE: "1"}
    assert tdm.max_evictions(job) == 2


TDM_PREEMPT = f"""
actions: "allocate, preempt"
tiers:
- plugins:
  - {{name: priority}}
  - {{name: gang}}
  - name: tdm
    arguments: {{tdm.revocable-zone.rz1: "{ALWAYS_OPEN}"}}
- plugins: [{{name: predicates}}]
"""
NOT_PREEMPTABLE = {tdm.PREEMPTABLE_KEY: "false"}
TDM_PREEMPT_CASES = [
    # A preemptor without the annotation is preemptable: tdm gives it no victim.
    Case("preemptable-preemptor-takes-none", [node("p-0", "2")], [running_since("a", "low", "p-0"), running_since("b", "low", "p-0"), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], TDM_PREEMPT, binds={}, evictions=[]),
    Case("guarded-preemptor-takes-one", [node("p-0", "2")], [running_since("a", "low", "p-0"), running_since("b", "low", "p-0"), with_meta(pod("h", "high"), annotations=NOT_PREEMPTABLE)],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], TDM_PREEMPT, binds={}, evictions=["a"]),
]


@pytest.mark.parametrize("case", TDM_PREEMPT_CASES, ids=lambda c: c.name)
def test_tdm_preemption(case: Case) -> None:
    run_case(case)


def test_tdm_puts_non_preemptable_jobs_first() -> None:
    preemptable = podgroup("a-preemptable", 1)
    preemptable["metadata"]["annotations"] = {tdm.PREEMPTABLE_KEY: "true"}
    conf_text = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: gang}, {name: tdm}]
- plugins: [{name: predicates}]
"""
    # One slot: the non-preemptable job wins it although the other comes first by name.
    run_case(Case("job-order", [node("n", "1")], [pod("x", "a-preemptable"), pod("y", "b-guarded")], [preemptable, podgroup("b-guarded", 1)], conf_text, binds={"y": "n"}))
