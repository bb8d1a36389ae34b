"""sla on in-memory snapshots: a job past its waiting time is enqueued and allocated ahead of the
others; the waiting time as a Go duration.

Waiting times are measured from PodGroups created long ago, against either a short time (long
past) or a century (never past), so no case depends on the clock.

Upstream: pkg/scheduler/plugins/sla/sla.go."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from reference_scheduler.scheduler.plugins import sla
from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import Case, FakeCache, run_case

CENTURY = "876000h"
SLA_ENQUEUE_CONF = """
actions: "enqueue"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: sla}]
- plugins: [{name: overcommit}, {name: predicates}, {name: proportion}]
"""
SLA_GLOBAL_CONF = SLA_ENQUEUE_CONF.replace("{name: sla}", "{name: sla, arguments: {sla-waiting-time: 1h}}")
SLA_ALLOCATE_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: sla}, {name: priority}, {name: gang}]
- plugins: [{name: predicates}]
"""


def annotated(pg: dict[str, Any], annotations: dict[str, str], created: str | None = None) -> dict[str, Any]:
    out = copy.deepcopy(pg)
    out["metadata"]["annotations"] = dict(annotations)
    if created:
        out["metadata"]["creationTimestamp"] = created
    return out


CASES = [
    Case(
        "sla: a job past its waiting time is enqueued although overcommit refuses it; others wait",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[
            annotated(podgroup("late", 8, "Pending", "8"), {"sla-waiting-time": "1h"}),
            annotated(podgroup("patient", 8, "Pending", "8"), {"sla-waiting-time": CENTURY}),
            podgroup("plain", 8, "Pending", "8"),
        ],
        conf=SLA_ENQUEUE_CONF,
        phases={"late": "Inqueue", "patient": "Pending", "plain": "Pending"},
    ),
    Case(
        "sla: the global waiting time applies to jobs without one; a job's own annotation wins",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[
            podgroup("plain", 8, "Pending", "8"),
            annotated(podgroup("own-century", 8, "Pending", "8"), {"volcano.sh/sla-waiting-time": CENTURY}),
        ],
        conf=SLA_GLOBAL_CONF,
        phases={"plain": "Inqueue", "own-century": "Pending"},
    ),
    Case(
        "sla: a waiting time that does not parse counts as none",
        nodes=[node("n0", "4")],
        pods=[],
        podgroups=[annotated(podgroup("typo", 8, "Pending", "8"), {"sla-waiting-time": "1 hour"})],
        conf=SLA_ENQUEUE_CONF,
        phases={"typo": "Pending"},
    ),
    Case(
        "sla: the earlier deadline is allocated first, before an older or higher-priority job",
        nodes=[node("n0", "2")],
        pods=[pod("older-0", "older", "2"), pod("younger-0", "younger", "2"), pod("vip-0", "vip", "2")],
        podgroups=[
            annotated(podgroup("older", 1), {"sla-waiting-time": CENTURY}, created="2020-01-01T00:00:00Z"),
            annotated(podgroup("younger", 1), {"sla-waiting-time": "24h"}, created="2020-06-01T00:00:00Z"),
            podgroup("vip", 1, priority="high"),
        ],
        conf=SLA_ALLOCATE_CONF,
        binds={"younger-0": "n0"},
    ),
    Case(
        "without sla the higher-priority job is allocated first",
        nodes=[node("n0", "2")],
        pods=[pod("older-0", "older", "2"), pod("younger-0", "younger", "2"), pod("vip-0", "vip", "2")],
        podgroups=[
            annotated(podgroup("older", 1), {"sla-waiting-time": CENTURY}, created="2020-01-01T00:00:00Z"),
            annotated(podgroup("younger", 1), {"sla-waiting-time": "24h"}, created="2020-06-01T00:00:00Z"),
            podgroup("vip", 1, priority="high"),
        ],
        conf=SLA_ALLOCATE_CONF.replace("{name: sla}, ", ""),
        binds={"vip-0": "n0"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1h2m3s4ms5us6ns", 3723.004005006), ("1.5h", 5400.0), ("90s", 90.0), ("300ms", 0.3), ("2µs", 2e-6), ("-2m", -120.0), ("0", 0.0)],
)
def test_go_durations_parse(text: str, seconds: float) -> None:
    parsed = sla.parse_duration(text)
    assert parsed is not None and abs(parsed.total_seconds() - seconds) < 1e-6


@pytest.mark.parametrize("text", ["", "1", "h", "1 hour", "1h 2m", "1.h5", "--1s", "1d"])
def test_other_strings_are_not_durations(text: str) -> None:
    assert sla.parse_duration(text) is None


def test_a_non_string_argument_is_ignored_as_upstream_does() -> None:
    plugin = sla.Sla({"sla-waiting-time": 1})
    assert plugin.global_waiting_time is None
    assert sla.Sla({"sla-waiting-time": "90s"}).global_waiting_time == datetime.timedelta(seconds=90)


def test_an_overdue_job_is_voted_pipelined_and_enqueueable() -> None:
    """sla's Permit in the first tier ends the vote; gang's Reject in the next is never heard."""
    from reference_scheduler.scheduler import conf_load
    from reference_scheduler.scheduler.framework import framework, session_plugins

    groups = [annotated(podgroup("late", 2), {"sla-waiting-time": "1m"}), annotated(podgroup("early", 2), {"sla-waiting-time": CENTURY})]
    pods = [pod("late-0", "late"), pod("late-1", "late"), pod("early-0", "early"), pod("early-1", "early")]
    cache = FakeCache([node("n0")], pods, groups, [queue()])
    ssn = framework.open_session(cache, conf_load.parse("actions: allocate\ntiers:\n- plugins: [{name: sla}]\n- plugins: [{name: gang}]\n"))
    late, early = ssn.jobs["ns/late"], ssn.jobs["ns/early"]
    assert session_plugins.job_pipelined(ssn, late) and session_plugins.job_enqueueable(ssn, late)
    # Not yet due: sla abstains and gang, next tier, rejects a job with nothing placed.
    assert not session_plugins.job_pipelined(ssn, early)
    assert session_plugins.job_order_key(ssn)(late, early) < 0
