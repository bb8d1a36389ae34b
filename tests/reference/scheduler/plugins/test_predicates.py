"""The predicates plugin on in-memory snapshots: taints and tolerations, nodeSelector, unschedulable
nodes, the pod count and extended resources; inter-pod affinity and anti-affinity and host ports,
each against the node kube-scheduler's rules pick (Volcano wraps kube-scheduler's plugins for
these); the pod topology spread filter (kube-scheduler's PodTopologySpread, which Volcano's
predicates calls); and the `predicate.*Enable` switches.

Upstream: pkg/scheduler/plugins/predicates/predicates.go."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference_scheduler.scheduler.plugins import predicates
from tests.reference.builders import HOSTNAME, host, node, pod, podgroup, with_meta
from tests.reference.scheduler_harness import Case, run_case

CASES = [
    Case(
        "taints keep pods off unless tolerated; nodeSelector is honored",
        nodes=[node("tainted", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]), node("plain", labels={"zone": "a"})],
        pods=[
            pod("t-0", "t", tolerations=[{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}], nodeSelector={"gpu": "x"}),
            pod("s-0", "s", nodeSelector={"zone": "a"}),
            pod("u-0", "u", nodeSelector={"zone": "b"}),
        ],
        podgroups=[podgroup("t", 1), podgroup("s", 1), podgroup("u", 1)],
        binds={"s-0": "plain"},
    ),
    Case(
        "an unschedulable node and a full pod count are skipped",
        nodes=[{**node("cordoned"), "spec": {"unschedulable": True}}, node("full", pods="1"), node("ok")],
        pods=[pod("busy", "other", node_name="full", phase="Running"), pod("a-0", "a")],
        podgroups=[podgroup("a", 1)],
        binds={"a-0": "ok"},
    ),
    Case(
        "extended resources must fit",
        nodes=[node("gpu", **{"nvidia.com/gpu": "8"}), node("cpu")],
        pods=[{**pod("g-0", "g"), "spec": {**pod("g-0", "g")["spec"], "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "4"}}}]}}],
        podgroups=[podgroup("g", 1)],
        binds={"g-0": "gpu"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_scheduling_cycle(case: Case) -> None:
    run_case(case)


# --- inter-pod affinity and host ports -------------------------------------------------------------
PREDICATES_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: binpack}]
"""


def affinity(kind: str, app: str, key: str = HOSTNAME) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def with_port(p: dict[str, Any], port: int) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port}]
    return out


NODE_FIT_CASES = [
    Case(
        "anti-affinity spreads a gang that binpack would pack",
        nodes=[host("a"), host("b"), host("c")],
        pods=[with_meta(pod(f"w{i}", "pg", affinity=affinity("podAntiAffinity", "web")), {"app": "web"}) for i in range(3)],
        podgroups=[podgroup("pg", 3)],
        conf=PREDICATES_CONF,
        binds={"w0": "a", "w1": "b", "w2": "c"},
    ),
    Case(
        "anti-affinity with more pods than nodes leaves the gang unbound",
        nodes=[host("a"), host("b")],
        pods=[with_meta(pod(f"w{i}", "pg", affinity=affinity("podAntiAffinity", "web")), {"app": "web"}) for i in range(3)],
        podgroups=[podgroup("pg", 3)],
        conf=PREDICATES_CONF,
        binds={},
        conditions={"pg": ("Unschedulable", "NotEnoughResources", "didn't satisfy existing pods anti-affinity rules")},
    ),
    Case(
        "required affinity follows a running pod to its node",
        nodes=[host("a"), host("b")],
        pods=[
            with_meta(pod("db", "other", node_name="b", phase="Running"), {"app": "db"}),
            pod("client", "pg", affinity=affinity("podAffinity", "db")),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=PREDICATES_CONF,
        binds={"client": "b"},
    ),
    Case(
        "the first pod of a self-affine group goes anywhere, the rest follow it",
        nodes=[host("a", cpu="2"), host("b", cpu="8")],
        pods=[with_meta(pod(f"p{i}", "pg", affinity=affinity("podAffinity", "grp")), {"app": "grp"}) for i in range(2)],
        podgroups=[podgroup("pg", 2)],
        conf=PREDICATES_CONF,
        binds={"p0": "a", "p1": "a"},
    ),
    Case(
        "required affinity to pods that do not exist (and not to itself) is unschedulable",
        nodes=[host("a"), host("b")],
        pods=[pod("client", "pg", affinity=affinity("podAffinity", "db"))],
        podgroups=[podgroup("pg", 1)],
        conf=PREDICATES_CONF,
        binds={},
        conditions={"pg": ("Unschedulable", "NotEnoughResources", "didn't match pod affinity rules")},
    ),
    Case(
        "a running pod's anti-affinity keeps matching pods off its node",
        nodes=[host("a"), host("b")],
        pods=[
            pod("loner", "other", node_name="a", phase="Running", affinity=affinity("podAntiAffinity", "web")),
            with_meta(pod("web", "pg"), {"app": "web"}),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=PREDICATES_CONF,
        binds={"web": "b"},
    ),
    Case(
        "anti-affinity by zone keeps a pod out of the whole zone",
        nodes=[host("a1", zone="z1"), host("a2", zone="z1"), host("b1", zone="z2")],
        pods=[
            with_meta(pod("first", "other", node_name="a1", phase="Running"), {"app": "web"}),
            with_meta(pod("second", "pg", affinity=affinity("podAntiAffinity", "web", "zone")), {"app": "web"}),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=PREDICATES_CONF,
        binds={"second": "b1"},
    ),
    Case(
        "a host port in use on a node sends the pod elsewhere",
        nodes=[host("a"), host("b")],
        pods=[with_port(pod("old", "other", node_name="a", phase="Running"), 8080), with_port(pod("new", "pg"), 8080)],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=PREDICATES_CONF,
        binds={"new": "b"},
    ),
    Case(
        "two pods of one gang with the same host port take two nodes",
        nodes=[host("a"), host("b")],
        pods=[with_port(pod(f"p{i}", "pg"), 9000) for i in range(2)],
        podgroups=[podgroup("pg", 2)],
        conf=PREDICATES_CONF,
        binds={"p0": "a", "p1": "b"},
    ),
    Case(
        "host ports with no node free leave the pod pending with the port reason",
        nodes=[host("a")],
        pods=[with_port(pod("old", "other", node_name="a", phase="Running"), 8080), with_port(pod("new", "pg"), 8080)],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=PREDICATES_CONF,
        binds={},
        conditions={"pg": ("Unschedulable", "NotEnoughResources", "didn't have free ports")},
    ),
]


@pytest.mark.parametrize("case", NODE_FIT_CASES, ids=[c.name for c in NODE_FIT_CASES])
def test_node_fit(case: Case) -> None:
    run_case(case)


# --- pod topology spread and the switches ----------------------------------------------------------
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


TOPOLOGY_SPREAD_CASES = [
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


@pytest.mark.parametrize("case", TOPOLOGY_SPREAD_CASES, ids=[c.name for c in TOPOLOGY_SPREAD_CASES])
def test_cycle(case: Case) -> None:
    run_case(case)


def test_switches_default_on() -> None:
    assert all(predicates.enabled({}).values())
    assert predicates.enabled({"predicate.PodAffinityEnable": False})["PodAffinity"] is False
