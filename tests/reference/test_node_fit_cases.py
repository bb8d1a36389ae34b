"""The predicates and nodeorder plugins on in-memory snapshots: inter-pod affinity and
anti-affinity, host ports, and nodeorder's scores, each against the node kube-scheduler's rules
pick (Volcano wraps kube-scheduler's plugins for these)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.framework import framework
from tests.reference.builders import node, pod, podgroup, queue
from tests.reference.scheduler_harness import PRIORITY_CLASSES, Case, FakeCache

PREDICATES_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: binpack}]
"""
NODEORDER_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: nodeorder}]
"""
MOSTREQUESTED_CONF = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: nodeorder, arguments: {leastrequested.weight: 0, balancedresource.weight: 0, mostrequested.weight: 1}}]
"""
HOSTNAME = "kubernetes.io/hostname"


def host(name: str, cpu: str = "4", **labels: str) -> dict[str, Any]:
    return node(name, cpu=cpu, labels={HOSTNAME: name, **labels})


def labelled(p: dict[str, Any], **labels: str) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["metadata"]["labels"] = labels
    return out


def affinity(kind: str, app: str, key: str = HOSTNAME) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def with_port(p: dict[str, Any], port: int) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["spec"]["containers"][0]["ports"] = [{"containerPort": port, "hostPort": port}]
    return out


CASES = [
    Case(
        "anti-affinity spreads a gang that binpack would pack",
        nodes=[host("a"), host("b"), host("c")],
        pods=[labelled(pod(f"w{i}", "pg", affinity=affinity("podAntiAffinity", "web")), app="web") for i in range(3)],
        podgroups=[podgroup("pg", 3)],
        conf=PREDICATES_CONF,
        binds={"w0": "a", "w1": "b", "w2": "c"},
    ),
    Case(
        "anti-affinity with more pods than nodes leaves the gang unbound",
        nodes=[host("a"), host("b")],
        pods=[labelled(pod(f"w{i}", "pg", affinity=affinity("podAntiAffinity", "web")), app="web") for i in range(3)],
        podgroups=[podgroup("pg", 3)],
        conf=PREDICATES_CONF,
        binds={},
        conditions={"pg": ("Unschedulable", "NotEnoughResources", "didn't satisfy existing pods anti-affinity rules")},
    ),
    Case(
        "required affinity follows a running pod to its node",
        nodes=[host("a"), host("b")],
        pods=[
            labelled(pod("db", "other", node_name="b", phase="Running"), app="db"),
            pod("client", "pg", affinity=affinity("podAffinity", "db")),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=PREDICATES_CONF,
        binds={"client": "b"},
    ),
    Case(
        "the first pod of a self-affine group goes anywhere, the rest follow it",
        nodes=[host("a", cpu="2"), host("b", cpu="8")],
        pods=[labelled(pod(f"p{i}", "pg", affinity=affinity("podAffinity", "grp")), app="grp") for i in range(2)],
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
            labelled(pod("web", "pg"), app="web"),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=PREDICATES_CONF,
        binds={"web": "b"},
    ),
    Case(
        "anti-affinity by zone keeps a pod out of the whole zone",
        nodes=[host("a1", zone="z1"), host("a2", zone="z1"), host("b1", zone="z2")],
        pods=[
            labelled(pod("first", "other", node_name="a1", phase="Running"), app="web"),
            labelled(pod("second", "pg", affinity=affinity("podAntiAffinity", "web", "zone")), app="web"),
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
    Case(
        "nodeorder's least-requested score sends a pod to the emptier node",
        nodes=[host("a"), host("b")],
        pods=[pod("busy", "other", cpu="3", node_name="a", phase="Running"), pod("new", "pg")],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=NODEORDER_CONF,
        binds={"new": "b"},
    ),
    Case(
        "nodeorder with mostrequested weighted instead packs onto the fuller node",
        nodes=[host("a"), host("b")],
        pods=[pod("busy", "other", cpu="2", node_name="b", phase="Running"), pod("new", "pg")],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=MOSTREQUESTED_CONF,
        binds={"new": "b"},
    ),
    Case(
        "nodeorder's preferred node affinity outweighs a little load",
        nodes=[host("a"), host("b", disk="ssd")],
        pods=[
            pod("busy", "other", cpu="1", node_name="b", phase="Running"),
            pod("new", "pg", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=NODEORDER_CONF,
        binds={"new": "b"},
    ),
    Case(
        "nodeorder's preferred pod anti-affinity steers away from a matching pod",
        nodes=[host("a"), host("b")],
        pods=[
            labelled(pod("web-1", "other", cpu="0", node_name="b", phase="Running"), app="web"),
            pod("web-2", "pg", affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}}]}}),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=MOSTREQUESTED_CONF,
        binds={"web-2": "a"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_fit(case: Case) -> None:
    cache = FakeCache(case.nodes, case.pods, case.podgroups, case.queues or [queue()], PRIORITY_CLASSES)
    framework.run_cycle(cache, conf_load.parse(case.conf))
    assert cache.binds == case.binds
    for group, (type_, reason, fragment) in case.conditions.items():
        conditions = {c["type"]: c for c in cache.statuses[group]["conditions"]}
        assert conditions[type_]["reason"] == reason and fragment in conditions[type_]["message"], conditions[type_]
