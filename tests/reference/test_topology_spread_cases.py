"""The predicates plugin's pod topology spread filter and its `predicate.*Enable` switches, on
in-memory snapshots (kube-scheduler's PodTopologySpread, which Volcano's predicates calls)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference_scheduler.scheduler.plugins import predicates
from tests.reference.builders import node, pod, podgroup
from tests.reference.scheduler_harness import Case, run_case

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def conf(arguments: str = "{}", scorer: str = "{name: binpack}") -> str:
    return f"""
actions: "allocate"
tiers:
- plugins: [{{name: gang}}]
- plugins: [{{name: predicates, arguments: {arguments}}}, {scorer}]
"""


def zoned(name: str, zone: str | None, cpu: str = "8") -> dict[str, Any]:
    labels = {HOSTNAME: name}
    if zone:
        labels[ZONE] = zone
    return node(name, cpu, labels=labels)


def spread(p: dict[str, Any], key: str = ZONE, skew: int = 1, **extra: Any) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"]["labels"] = {"app": "web"}
    constraint = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}, **extra}
    out["spec"]["topologySpreadConstraints"] = [constraint]
    return out


def web(name: str, node_name: str) -> dict[str, Any]:
    out = pod(name, "old", "1", node_name=node_name, phase="Running")
    out["metadata"]["labels"] = {"app": "web"}
    return out


TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}

CASES = [
    Case(
        "four pods of a gang spread two per zone although binpack would pack them",
        nodes=[zoned("a0", "a"), zoned("b0", "b")],
        pods=[spread(pod(f"s-{i}", "s")) for i in range(4)],
        podgroups=[podgroup("s", 4)],
        conf=conf(),
        binds={"s-0": "a0", "s-1": "b0", "s-2": "a0", "s-3": "b0"},
    ),
    Case(
        "a node without the topology key takes no constrained pod",
        nodes=[zoned("a0", None), zoned("b0", "b")],
        pods=[spread(pod("s-0", "s"))],
        podgroups=[podgroup("s", 1)],
        conf=conf(),
        binds={"s-0": "b0"},
    ),
    Case(
        "pods already running count: the new pod goes to the emptier zone",
        nodes=[zoned("a0", "a"), zoned("b0", "b")],
        pods=[web("old-0", "a0"), spread(pod("s-0", "s"))],
        podgroups=[podgroup("old", 1, phase="Running"), podgroup("s", 1)],
        conf=conf(),
        binds={"s-0": "b0"},
    ),
    Case(
        "maxSkew 2 lets two more land in the fuller zone",
        nodes=[zoned("a0", "a"), zoned("b0", "b")],
        pods=[spread(pod(f"s-{i}", "s"), skew=2) for i in range(2)],
        podgroups=[podgroup("s", 2)],
        conf=conf(),
        binds={"s-0": "a0", "s-1": "a0"},
    ),
    Case(
        "ScheduleAnyway is no filter",
        nodes=[zoned("a0", "a"), zoned("b0", "b")],
        pods=[spread(pod(f"s-{i}", "s"), whenUnsatisfiable="ScheduleAnyway") for i in range(2)],
        podgroups=[podgroup("s", 2)],
        conf=conf(),
        binds={"s-0": "a0", "s-1": "a0"},
    ),
    Case(
        "minDomains above the domains there are: the least count is taken as 0",
        nodes=[zoned("a0", "a"), zoned("b0", "b")],
        pods=[spread(pod(f"s-{i}", "s"), minDomains=3) for i in range(3)],
        podgroups=[podgroup("s", 1)],
        conf=conf(),
        binds={"s-0": "a0", "s-1": "b0"},
    ),
    Case(
        "predicate.PodTopologySpreadEnable false: binpack packs them",
        nodes=[zoned("a0", "a"), zoned("b0", "b")],
        pods=[spread(pod(f"s-{i}", "s")) for i in range(2)],
        podgroups=[podgroup("s", 2)],
        conf=conf("{predicate.PodTopologySpreadEnable: false}"),
        binds={"s-0": "a0", "s-1": "a0"},
    ),
    Case(
        "predicate.TaintTolerationEnable false: a NoSchedule taint no longer keeps the pod out",
        nodes=[node("a0", "8", taints=[TAINT])],
        pods=[pod("p-0", "p")],
        podgroups=[podgroup("p", 1)],
        conf=conf("{predicate.TaintTolerationEnable: false}"),
        binds={"p-0": "a0"},
    ),
    Case(
        "predicate.NodeAffinityEnable false: a nodeSelector no node matches is ignored",
        nodes=[node("a0", "8")],
        pods=[pod("p-0", "p", nodeSelector={"disk": "ssd"})],
        podgroups=[podgroup("p", 1)],
        conf=conf("{predicate.NodeAffinityEnable: false}"),
        binds={"p-0": "a0"},
    ),
    Case(
        "a switch given as a string is ignored, as upstream's: the taint still keeps the pod out",
        nodes=[node("a0", "8", taints=[TAINT])],
        pods=[pod("p-0", "p")],
        podgroups=[podgroup("p", 1)],
        conf=conf("{predicate.TaintTolerationEnable: 'false'}"),
        binds={},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cycle(case: Case) -> None:
    run_case(case)


def test_switches_default_on() -> None:
    assert all(predicates.enabled({}).values())
    assert predicates.enabled({"predicate.PodAffinityEnable": False})["PodAffinity"] is False
