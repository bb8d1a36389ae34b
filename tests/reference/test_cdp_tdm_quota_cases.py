"""cdp, tdm and resourcequota on in-memory snapshots: who may be a victim, where revocable nodes
may be used, which jobs are enqueued (scenarios/cdp, scenarios/tdm and scenarios/resourcequota
prove the same against an API server)."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework
from reference_scheduler.scheduler.plugins import cdp, resourcequota, tdm
from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import (
    PRIORITY_CLASSES,
    Case,
    FakeCache,
    run_case,
)

# Taken once, when the module is imported: the cases' pods were scheduled some seconds before it.
# A test may run many minutes later in a long session, so a pod meant to be still cooling has a
# cooldown of a day, never one a slow session could outlast.
NOW = datetime.datetime.now(datetime.timezone.utc)


def stamp(seconds_ago: float) -> str:
    return (NOW - datetime.timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def running(name: str, group: str, node_name: str, cpu: str = "1", labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None, scheduled_ago: float = 3600) -> dict[str, Any]:
    out = pod(name, group, cpu, node_name=node_name, phase="Running")
    out["metadata"]["labels"] = dict(labels or {})
    out["metadata"]["annotations"].update(annotations or {})
    out["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp(scheduled_ago)}]
    return out


def with_annotations(p: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"]["annotations"].update(annotations)
    return out


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
         [running("a", "low", "n", labels={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=5), running("b", "low", "n", annotations={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=5), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], CDP_PREEMPT, binds={}, evictions=[]),
    Case("cooled-down-pod-is-a-victim", [node("n", "2")],
         [running("a", "low", "n", labels={cdp.COOLDOWN_KEY: "10s"}, scheduled_ago=60), running("b", "low", "n", labels={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=5), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], CDP_PREEMPT, binds={}, evictions=["a"]),
    Case("unparsable-cooldown-protects-nothing", [node("n", "2")],
         [running("a", "low", "n", labels={cdp.COOLDOWN_KEY: "soon"}, scheduled_ago=1), running("b", "low", "n", labels={cdp.COOLDOWN_KEY: "24h"}, scheduled_ago=1), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], CDP_PREEMPT, binds={}, evictions=["a"]),
]


@pytest.mark.parametrize("case", CDP_CASES, ids=lambda c: c.name)
def test_cdp(case: Case) -> None:
    run_case(case)


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
    Case("preemptable-pod-prefers-revocable-node", [node("a-plain", "4"), node("b-revocable", "4", labels=REVOCABLE)], [with_annotations(pod("p", "pg"), PREEMPTABLE)], [podgroup("pg", 1)], TDM_ALLOCATE,
         binds={"p": "b-revocable"}),
    Case("unconfigured-zone-takes-nothing", [node("a-other", "4", labels={tdm.REVOCABLE_ZONE_KEY: "rz9"}), node("b-plain", "4")],
         [with_annotations(pod("p", "pg"), {tdm.REVOCABLE_ZONE_KEY: "*"})], [podgroup("pg", 1)], TDM_ALLOCATE, binds={"p": "b-plain"}),
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
    pods = [running(f"w{i}", "pg", "r-0", annotations=PREEMPTABLE) for i in range(3)] + [running("x", "pg", "p-0", annotations=PREEMPTABLE)]
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
    Case("preemptable-preemptor-takes-none", [node("p-0", "2")], [running("a", "low", "p-0"), running("b", "low", "p-0"), pod("h", "high")],
         [podgroup("low", 1, "Running", **LOW), podgroup("high", 1, **HIGH)], TDM_PREEMPT, binds={}, evictions=[]),
    Case("guarded-preemptor-takes-one", [node("p-0", "2")], [running("a", "low", "p-0"), running("b", "low", "p-0"), with_annotations(pod("h", "high"), NOT_PREEMPTABLE)],
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
