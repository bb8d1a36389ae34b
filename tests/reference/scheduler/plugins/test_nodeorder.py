"""The nodeorder plugin on in-memory snapshots: its least-requested, most-requested, preferred node
affinity and preferred pod anti-affinity scores, each against the node kube-scheduler's rules pick;
and its image locality: the scores kube-scheduler's ImageLocality gives (size times the share of
nodes holding the image, scaled between 23 MiB and 1000 MiB per container), and a pod sent to the
node that holds its image although the other node is emptier.

Upstream: pkg/scheduler/plugins/nodeorder/nodeorder.go."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.framework import framework
from reference_scheduler.scheduler.plugins import image_locality
from tests.reference.builders import (
    HOSTNAME,
    host,
    node,
    pod,
    podgroup,
    queue,
    with_meta,
)
from tests.reference.scheduler_harness import (
    PRIORITY_CLASSES,
    Case,
    FakeCache,
    run_case,
)

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


NODE_FIT_CASES = [
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
            with_meta(pod("web-1", "other", cpu="0", node_name="b", phase="Running"), {"app": "web"}),
            pod("web-2", "pg", affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}}]}}),
        ],
        podgroups=[podgroup("pg", 1), podgroup("other", 1, phase="Running")],
        conf=MOSTREQUESTED_CONF,
        binds={"web-2": "a"},
    ),
]


@pytest.mark.parametrize("case", NODE_FIT_CASES, ids=[c.name for c in NODE_FIT_CASES])
def test_node_fit(case: Case) -> None:
    run_case(case)


# --- image locality --------------------------------------------------------------------------------
MIB = 1024 * 1024


def holding(name: str, *images: tuple[str, int], cpu: str = "4") -> dict[str, Any]:
    made = node(name, cpu=cpu)
    made["status"]["images"] = [{"names": [image], "sizeBytes": size} for image, size in images]
    return made


def using(p: dict[str, Any], *images: str) -> dict[str, Any]:
    out = copy.deepcopy(p)
    out["spec"]["containers"] = [{"name": f"c{i}", "image": image, "resources": {"requests": {"cpu": "100m"}}} for i, image in enumerate(images)]
    return out


@pytest.mark.parametrize(
    ("nodes", "images", "scores"),
    [
        # 800 MiB on one node of two counts 400 MiB there: 100 * (400 - 23) / (1000 - 23) -> 38.
        ([holding("a"), holding("b", ("reg/train:v1", 800 * MIB))], ["reg/train:v1"], [0, 38]),
        # On both nodes it counts whole: 100 * (800 - 23) / 977 -> 79.
        ([holding("a", ("reg/train:v1", 800 * MIB)), holding("b", ("reg/train:v1", 800 * MIB))], ["reg/train:v1"], [79, 79]),
        # Under 23 MiB counts as nothing; above 1000 MiB per container as everything.
        ([holding("a", ("small:v1", 20 * MIB)), holding("b", ("huge:v1", 3000 * MIB))], ["small:v1"], [0, 0]),
        ([holding("a", ("huge:v1", 3000 * MIB))], ["huge:v1"], [100]),
        # An untagged image is the :latest one; two containers double the ceiling.
        ([holding("a", ("train:latest", 1000 * MIB))], ["train", "other:v2"], [49]),
    ],
    ids=["one-of-two", "everywhere", "too-small", "capped", "latest-and-two-containers"],
)
def test_scores_follow_kube_schedulers_image_locality(nodes: list[dict[str, Any]], images: list[str], scores: list[int]) -> None:
    states = image_locality.ImageStates(nodes)
    assert list(states.scores(using(pod("p", "pg"), *images))) == scores


NODEORDER = """
actions: "allocate"
tiers:
- plugins: [{name: gang}]
- plugins: [{name: predicates}, {name: nodeorder%s}]
"""


@pytest.mark.parametrize(("arguments", "chosen"), [("", "b"), (", arguments: {imagelocality.weight: 0}", "a")], ids=["holds-the-image", "weight-0-ignores-it"])
def test_a_pod_goes_where_its_image_is_unless_the_weight_is_0(arguments: str, chosen: str) -> None:
    nodes = [holding("a"), holding("b", ("reg/train:v1", 900 * MIB))]
    pods = [pod("busy", "other", cpu="1", node_name="b", phase="Running"), using(pod("new", "pg"), "reg/train:v1")]
    cache = FakeCache(nodes, pods, [podgroup("pg", 1), podgroup("other", 1, phase="Running")], [queue()], PRIORITY_CLASSES)
    framework.run_cycle(cache, conf_load.parse(NODEORDER % arguments))
    assert cache.binds == {"new": chosen}
