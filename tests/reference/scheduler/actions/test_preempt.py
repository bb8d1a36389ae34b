"""The preempt action on in-memory snapshots: a higher-priority job takes from a lower-priority one
as far as the victim's gang allows; who may be a victim (never a pod labelled
volcano.sh/preemptable false, and a gated preemptor takes nothing); and its topology-aware variant
(`enableTopologyAwarePreemption`), which chooses victims per node as kube-scheduler's default
preemption does (issue 19's scheduler rules; the scenarios prove the same against an API server).

Upstream: pkg/scheduler/actions/preempt/preempt.go."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.scheduler.api import job_info
from tests.reference.builders import (
    HOSTNAME,
    gated,
    host,
    node,
    pod,
    podgroup,
    running,
    with_meta,
)
from tests.reference.scheduler_harness import (
    PREEMPT_CONF,
    TOPOLOGY_PREEMPT_CONF,
    Case,
    run_case,
)

CASES = [
    Case(
        "preempt: a high-priority job evicts one pod of a lower-priority one, as far as its gang allows",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), pod("lo-1", "lo", "1", node_name="n0", phase="Running"), pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 1, priority="low"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=["lo-0"],
    ),
    Case(
        "preempt: never below the victim's minAvailable",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), pod("lo-1", "lo", "1", node_name="n0", phase="Running"), pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 2, priority="low"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "preempt: equal priority takes nothing",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), pod("lo-1", "lo", "1", node_name="n0", phase="Running"), pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 1, priority="high"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "preempt: a preemptable=false pod is never a victim",
        nodes=[node("n0", "2")],
        pods=[pod("lo-0", "lo", "1", node_name="n0", phase="Running"), {**pod("lo-1", "lo", "1", node_name="n0", phase="Running"), "metadata": {**pod("lo-1", "lo")["metadata"], "labels": {"volcano.sh/preemptable": "false"}}}, pod("hi-0", "hi", "1")],
        podgroups=[podgroup("lo", 1, priority="low"), podgroup("hi", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=["lo-0"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)


def anti_affinity(app: str) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": HOSTNAME}]}}


LOW_ON_BOTH = [with_meta(running(f"low-{i}", "low", f"n{i // 2}"), {"app": "web"}) for i in range(4)]

VICTIM_CASES = [
    Case(
        "a gated preemptor evicts nobody",
        nodes=[node("n0", "2")],
        pods=[running("low-0", "low", "n0"), running("low-1", "low", "n0"), gated(pod("high-0", "high"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        binds={},
        evictions=[],
    ),
    Case(
        "a pod labelled volcano.sh/preemptable false is no victim: the other node's pod goes",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[*(with_meta(running(f"keep-{i}", "keep", "n0"), {job_info.PREEMPTABLE_KEY: "false"}) for i in range(2)), *(running(f"plain-{i}", "plain", "n1") for i in range(2)), pod("high-0", "high")],
        podgroups=[podgroup("keep", 1, phase="Running", priority="low"), podgroup("plain", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        evictions=["plain-0"],
        binds={},
    ),
    Case(
        "with the label rule switched off the first node's pod goes (the broken build)",
        nodes=[node("n0", "2"), node("n1", "2")],
        pods=[*(with_meta(running(f"keep-{i}", "keep", "n0"), {job_info.PREEMPTABLE_KEY: "false"}) for i in range(2)), *(running(f"plain-{i}", "plain", "n1") for i in range(2)), pod("high-0", "high")],
        podgroups=[podgroup("keep", 1, phase="Running", priority="low"), podgroup("plain", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        disabled=frozenset({"preemptable-label"}),
        evictions=["keep-0"],
        binds={},
    ),
    Case(
        "topology-aware preemption empties a node of the pods the preemptor's anti-affinity repels",
        nodes=[host("n0", "2"), host("n1", "2")],
        pods=[*LOW_ON_BOTH, pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=TOPOLOGY_PREEMPT_CONF,
        # Both web pods of the first node, the later one first (the reverse of task order).
        evictions=["low-1", "low-0"],
        binds={},
    ),
    Case(
        "normal preemption evicts only for room although the anti-affinity still fails there",
        nodes=[host("n0", "2"), host("n1", "2")],
        pods=[*LOW_ON_BOTH, pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=PREEMPT_CONF,
        evictions=["low-1"],
        binds={},
    ),
    Case(
        "with the rule switched off the argument is ignored (the broken build)",
        nodes=[host("n0", "2"), host("n1", "2")],
        pods=[*LOW_ON_BOTH, pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=TOPOLOGY_PREEMPT_CONF,
        disabled=frozenset({"topology-aware-preemption"}),
        evictions=["low-1"],
        binds={},
    ),
    Case(
        "topology-aware preemption reprieves the victims the preemptor can live beside",
        nodes=[host("n0", "3")],
        pods=[with_meta(running("low-0", "low", "n0"), {"app": "web"}), running("low-1", "low", "n0"), running("low-2", "low", "n0"), pod("high-0", "high", affinity=anti_affinity("web"))],
        podgroups=[podgroup("low", 1, phase="Running", priority="low"), podgroup("high", 1, priority="high")],
        conf=TOPOLOGY_PREEMPT_CONF,
        # The web pod must go (anti-affinity); it also frees the CPU, so the others stay.
        evictions=["low-0"],
        binds={},
    ),
]


@pytest.mark.parametrize("case", VICTIM_CASES, ids=[c.name for c in VICTIM_CASES])
def test_cycle(case: Case) -> None:
    run_case(case)
