"""The harness of the HyperNode cycles: a FakeCache that also holds HyperNode objects and records
the PodGroup annotations a cycle writes, a Case of jobs with a network topology (hard: allocate
keeps the job under one HyperNode, tests/reference/scheduler/actions/test_allocate.py; soft: the
network-topology-aware plugin gathers it, .../plugins/test_network_topology_aware.py), its check,
and the trees the cases run on.

The trees are small copies of the one Volcano's hypernode e2e builds
(test/e2e/hypernode/network_topology_test.go): tier-1 HyperNodes of two nodes, tier-2 over pairs
of those, one tier-3 root."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import hyper_node_info, job_info
from reference_scheduler.scheduler.framework import framework
from tests.reference import scheduler_harness as harness
from tests.reference.builders import node, pod, queue, tree

CONF = """
actions: "allocate"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: network-topology-aware}]
"""
NO_PLUGIN_CONF = CONF.replace(", {name: network-topology-aware}", "")
BINPACK_CONF = CONF.replace("{name: predicates}", "{name: predicates}, {name: binpack}")
ANNOTATION = hyper_node_info.ALLOCATED_HYPERNODE

# The e2e tree: s0..s3 over node pairs, s4 over s0 s1, s5 over s2 s3, s6 over s4 s5.
E2E_TREE = tree({f"s{i}": [f"n{2 * i}", f"n{2 * i + 1}"] for i in range(4)}, {"s4": ["s0", "s1"], "s5": ["s2", "s3"]}, "s6")
EIGHT_NODES = [node(f"n{i}", "4") for i in range(8)]
FOUR_NODES = [node(f"n{i}", "4") for i in range(4)]
TWO_RACKS = tree({"s0": ["n0", "n1"], "s1": ["n2", "n3"]}, {"s2": ["s0", "s1"]})
# Racks whose nodes are not neighbours by name: placing by name order splits a job across them.
CROSSED_RACKS = tree({"s0": ["n0", "n3"], "s1": ["n1", "n2"]}, {"s2": ["s0", "s1"]})


def filler(name: str, on: str, cpu: str = "3") -> dict[str, Any]:
    return pod(name, "filler", cpu, node_name=on, phase="Running")


def job_pods(group: str, count: int, cpu: str = "3") -> list[dict[str, Any]]:
    return [pod(f"{group}-{i}", group, cpu) for i in range(count)]


class HyperNodeCache(harness.FakeCache):
    """FakeCache with HyperNode objects and the annotations the cycle writes."""

    def __init__(self, case: HyperNodeCase) -> None:
        super().__init__(case.nodes, case.pods, case.podgroups, [queue()], harness.PRIORITY_CLASSES)
        self.hypernodes = _Objects(case.hypernodes)  # type: ignore[assignment]
        self.annotations: dict[str, dict[str, str]] = {}

    def update_podgroup_annotations(self, job: job_info.JobInfo, annotations: dict[str, str]) -> None:
        self.annotations.setdefault(job.name, {}).update(annotations)


class _Objects:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def snapshot(self) -> list[dict[str, Any]]:
        return self.items


@dataclasses.dataclass
class HyperNodeCase:
    name: str
    nodes: list[dict[str, Any]]
    hypernodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    podgroups: list[dict[str, Any]]
    conf: str = CONF
    # pod -> node; pods not named must stay unbound (fillers are bound already)
    binds: dict[str, str] = dataclasses.field(default_factory=dict)
    # PodGroup -> the HyperNode recorded on it this cycle (absent: none written)
    recorded: dict[str, str] = dataclasses.field(default_factory=dict)
    # PodGroup -> a fragment of its Unschedulable condition's message
    unschedulable: dict[str, str] = dataclasses.field(default_factory=dict)


def run_case(case: HyperNodeCase) -> None:
    """One cycle of the case's conf over its objects and HyperNodes, judged against what the case
    expects."""
    cache = HyperNodeCache(case)
    if any(pg["spec"].get("queue") == "other" for pg in case.podgroups):
        cache.queues = _Objects([queue(), queue("other")])  # type: ignore[assignment]
    framework.run_cycle(cache, conf_load.parse(case.conf))
    assert cache.binds == case.binds
    assert {pg: a[ANNOTATION] for pg, a in cache.annotations.items()} == case.recorded
    for group, fragment in case.unschedulable.items():
        conditions = {c["type"]: c for c in cache.statuses[group]["conditions"]}
        assert conditions["Unschedulable"]["reason"] == "NotEnoughResources", conditions
        assert fragment in conditions["Unschedulable"]["message"], conditions["Unschedulable"]["message"]


def built(objects: list[dict[str, Any]], nodes: list[str]) -> hyper_node_info.HyperNodesInfo:
    """The tree of these HyperNode objects over nodes of these names."""
    return hyper_node_info.build({o["metadata"]["name"]: o for o in objects}, {n: {} for n in nodes})
