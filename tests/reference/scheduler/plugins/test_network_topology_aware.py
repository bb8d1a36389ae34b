"""network-topology-aware on in-memory snapshots: a job with a soft network topology gathers under
as low a HyperNode as it can (the HyperNode cycles' harness is hypernode_harness.py), and the
tier scores that gather it.

Upstream: pkg/scheduler/plugins/network-topology-aware/network_topology_aware.go."""

from __future__ import annotations

import pytest

from reference_scheduler.scheduler.plugins import network_topology_aware
from tests.reference.builders import topology_podgroup
from tests.reference.scheduler import hypernode_harness
from tests.reference.scheduler.hypernode_harness import (
    CROSSED_RACKS,
    E2E_TREE,
    EIGHT_NODES,
    FOUR_NODES,
    NO_PLUGIN_CONF,
    HyperNodeCase,
    built,
    filler,
    job_pods,
)

HYPERNODE_CASES = [
    HyperNodeCase(
        "soft: the second pod follows the first into its tier-1 HyperNode",
        FOUR_NODES, CROSSED_RACKS, job_pods("j", 2), [topology_podgroup("j", 2, "soft")],
        binds={"j-0": "n0", "j-1": "n3"}, recorded={"j": "s0"},
    ),
    HyperNodeCase(
        "soft without network-topology-aware: nothing keeps the pods together",
        FOUR_NODES, CROSSED_RACKS, job_pods("j", 2), [topology_podgroup("j", 2, "soft")],
        conf=NO_PLUGIN_CONF, binds={"j-0": "n0", "j-1": "n1"}, recorded={"j": "s2"},
    ),
    HyperNodeCase(
        "soft: with room for one pod per tier-1 HyperNode the job still runs, recorded at tier 2",
        FOUR_NODES, CROSSED_RACKS, [filler("f-0", "n3"), filler("f-1", "n2"), *job_pods("j", 2)], [topology_podgroup("j", 2, "soft")],
        binds={"j-0": "n0", "j-1": "n1"}, recorded={"j": "s2"},
    ),
    HyperNodeCase(
        "soft, three tiers: pods that cannot stay in the first pod's rack go to the nearest rack with room",
        EIGHT_NODES, E2E_TREE, [filler("f-0", "n1"), filler("f-1", "n2"), *job_pods("j", 3)], [topology_podgroup("j", 3, "soft")],
        binds={"j-0": "n0", "j-1": "n3", "j-2": "n4"}, recorded={"j": "s6"},
    ),
]


@pytest.mark.parametrize("case", HYPERNODE_CASES, ids=[c.name for c in HYPERNODE_CASES])
def test_hypernode_cycle(case: HyperNodeCase) -> None:
    hypernode_harness.run_case(case)


@pytest.mark.parametrize(("hypernode_name", "allocated", "score"), [
    ("s0", "s0", 100.0),   # the same rack
    ("s1", "s0", 50.0),    # common ancestor s4, tier 2 of 1..3
    ("s3", "s0", 0.0),     # common ancestor s6, the top tier
    ("", "s0", 0.0),       # a node under no HyperNode
])
def test_tier_scores(hypernode_name: str, allocated: str, score: float) -> None:
    info = built(E2E_TREE, [f"n{i}" for i in range(8)])
    assert network_topology_aware.tier_score(info, hypernode_name, allocated) == score
