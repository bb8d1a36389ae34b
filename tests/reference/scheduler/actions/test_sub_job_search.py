"""allocate's sub-job path (a PodGroup's subGroupPolicy, a Volcano Job's partitions, v1.14) on
in-memory snapshots, one cycle each: every partition inside one HyperNode of its tier, the job
inside its own tier, the best binpacked HyperNode first, minSubGroups partitions before the gang
counts as ready, a partition placed in part growing only where it is; and the sub-job model the
gang plugin reads (sub-jobs from pod labels, their readiness, tier names).

Upstream: pkg/scheduler/actions/allocate/allocate.go (allocateForJob, allocateForSubJob),
pkg/scheduler/api/sub_job_info.go, pkg/scheduler/plugins/network-topology-aware (v1.15.1)."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.scheduler.api import hyper_node_info, job_info, sub_job_info
from tests.reference.builders import hypernode, node, pod, podgroup, tree
from tests.reference.scheduler import hypernode_harness
from tests.reference.scheduler.hypernode_harness import (
    E2E_TREE,
    NO_PLUGIN_CONF,
    HyperNodeCase,
    filler,
)

EIGHT = [node(f"n{i}", "4") for i in range(8)]


def partition_pods(group: str, count: int, size: int, cpu: str = "3", placed: dict[int, str] | None = None) -> list[dict[str, Any]]:
    """The pods of one task `w` cut into partitions of `size`, labelled as the job controller
    labels them; `placed` puts some of them on nodes, running."""
    out = []
    for i in range(count):
        on = (placed or {}).get(i, "")
        made = pod(f"{group}-{i}", group, cpu, node_name=on, phase="Running" if on else "Pending")
        made["metadata"]["labels"] = {"volcano.sh/task-spec": "w", "volcano.sh/partition-id": str(i // size)}
        out.append(made)
    return out


def partitioned_group(name: str, min_member: int, size: int, min_groups: int = 0, partition_topology: dict[str, Any] | None = None, job_topology: dict[str, Any] | None = None, phase: str = "Inqueue") -> dict[str, Any]:
    out = podgroup(name, min_member, phase=phase)
    policy: dict[str, Any] = {"name": "w", "subGroupSize": size, "minSubGroups": min_groups, "labelSelector": {"matchLabels": {"volcano.sh/task-spec": "w"}}, "matchLabelKeys": ["volcano.sh/partition-id"]}
    if partition_topology:
        policy["networkTopology"] = partition_topology
    out["spec"]["subGroupPolicy"] = [policy]
    if job_topology:
        out["spec"]["networkTopology"] = job_topology
    return out


def in_queue(group: dict[str, Any], name: str) -> dict[str, Any]:
    group["spec"]["queue"] = name
    return group


TIER1 = {"mode": "hard", "highestTierAllowed": 1}
# Room for one 3-CPU pod on n0, n1 (s0), n3 (s1), n4, n5 (s2): only s0 and s2 hold a partition.
SPLIT_ROOM = [filler("f-2", "n2"), filler("f-6", "n6"), filler("f-7", "n7")]

CASES = [
    HyperNodeCase(
        "each partition inside one tier-1 HyperNode, where name order would split the second",
        EIGHT, E2E_TREE, [*SPLIT_ROOM, *partition_pods("p", 4, 2)], [partitioned_group("p", 4, 2, partition_topology=TIER1)],
        binds={"p-0": "n0", "p-1": "n1", "p-2": "n4", "p-3": "n5"},
    ),
    HyperNodeCase(
        "without network-topology-aware (v1.14+), partitions are not confined",
        EIGHT, E2E_TREE, [*SPLIT_ROOM, *partition_pods("p", 4, 2)], [partitioned_group("p", 4, 2, partition_topology=TIER1)],
        conf=NO_PLUGIN_CONF, binds={"p-0": "n0", "p-1": "n1", "p-2": "n3", "p-3": "n4"},
    ),
    HyperNodeCase(
        "a gang whose second partition fits in no tier-1 HyperNode binds nothing",
        EIGHT, E2E_TREE, [filler("f-1", "n1"), filler("f-5", "n5"), filler("f-6", "n6"), filler("f-7", "n7"), *partition_pods("p", 4, 2)],
        [partitioned_group("p", 4, 2, partition_topology=TIER1)],
        unschedulable={"p": "pod group is not ready"},
    ),
    HyperNodeCase(
        "the job's tier bounds its partitions: both under s5, though s0 is the best binpacked",
        EIGHT, E2E_TREE, [*(filler(f"f-{i}", f"n{i}", cpu) for i, cpu in ((0, "2"), (1, "2"), (2, "4"), (3, "4"), (5, "4"), (7, "4"))), *partition_pods("p", 4, 2, cpu="2")],
        [partitioned_group("p", 4, 2, partition_topology=TIER1, job_topology={"mode": "hard", "highestTierAllowed": 2})],
        # Room for one partition of two 2-CPU pods in s0 (one per node), s2 (n4) and s3 (n6),
        # none in s1: s4 holds one partition, s5 two.
        binds={"p-0": "n4", "p-1": "n4", "p-2": "n6", "p-3": "n6"},
    ),
    HyperNodeCase(
        "minSubGroups: the gang starts with two of four partitions, the rest may not leave its tier-1 HyperNode",
        EIGHT, E2E_TREE, partition_pods("p", 8, 2, cpu="2"),
        [partitioned_group("p", 4, 2, min_groups=2, partition_topology=TIER1, job_topology=TIER1)],
        binds={"p-0": "n0", "p-1": "n0", "p-2": "n1", "p-3": "n1"},
    ),
    HyperNodeCase(
        "a partition placed in part grows only inside its HyperNode, though another has more room",
        EIGHT, E2E_TREE, [filler("f-2", "n2", "1"), *partition_pods("p", 2, 2, placed={0: "n3"})],
        [partitioned_group("p", 2, 2, partition_topology=TIER1, phase="Running")],
        binds={"p-1": "n2"},
    ),
    HyperNodeCase(
        "an inconsistent HyperNode tree holds back partitions with a topology, not those without",
        EIGHT, [*E2E_TREE, hypernode("s9", 2, ["s0"], "HyperNode")], [*partition_pods("p", 2, 1), *partition_pods("q", 2, 1, cpu="1")],
        # q in another queue: as upstream, the held-back job's queue waits for the cycle.
        [partitioned_group("p", 2, 1, partition_topology=TIER1), in_queue(partitioned_group("q", 2, 1), "other")],
        binds={"q-0": "n0", "q-1": "n0"},
    ),
    HyperNodeCase(
        "a soft job is searched lowest tier first, then wider: s6 holds both partitions",
        EIGHT, E2E_TREE, [*SPLIT_ROOM, filler("f-5", "n5"), filler("f-1", "n1"), *partition_pods("p", 2, 1)],
        [partitioned_group("p", 2, 1, partition_topology=TIER1, job_topology={"mode": "soft"})],
        binds={"p-0": "n0", "p-1": "n3"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sub_job_cycle(case: HyperNodeCase) -> None:
    hypernode_harness.run_case(case)


def _job(pods: list[dict[str, Any]], group: dict[str, Any]) -> job_info.JobInfo:
    job = job_info.JobInfo(uid="ns/p", name="p", namespace="ns", queue="default", min_available=group["spec"]["minMember"], min_task_member={}, podgroup=group)
    for p in pods:
        task = job_info.TaskInfo.from_pod(p, job.uid)
        job.tasks[task.uid] = task
    return job


def test_sub_jobs_follow_the_partition_labels_and_the_rest_form_the_default_one() -> None:
    pods = partition_pods("p", 4, 2)
    stray = pod("p-extra", "p")
    job = _job([*pods, stray], partitioned_group("p", 4, 2, min_groups=2, partition_topology=TIER1))
    subs = sub_job_info.sub_jobs(job)
    assert sorted((s.group, s.match_index, sorted(t.name for t in s.tasks), s.min_available) for s in subs.values()) == [
        ("", 0, ["p-extra"], 1), ("w", 0, ["p-0", "p-1"], 2), ("w", 1, ["p-2", "p-3"], 2),
    ]
    assert subs["ns/p/w/0"].topology == hyper_node_info.NetworkTopology("hard", 1)
    assert sub_job_info.check_valid(job)
    assert not sub_job_info.check_ready(job)


def test_min_sub_groups_counts_ready_partitions_and_existing_ones() -> None:
    pods = partition_pods("p", 4, 2, placed={0: "n0", 1: "n1"})
    job = _job(pods, partitioned_group("p", 2, 2, min_groups=2))
    assert not sub_job_info.check_ready(job)  # one of the two partitions is ready
    job = _job(pods[:2], partitioned_group("p", 2, 2, min_groups=2))
    assert not sub_job_info.check_valid(job)  # only one partition's pods exist
    assert [s.id for s in sub_job_info.worksheet(_job(partition_pods("p", 6, 2, placed={2: "n0", 3: "n1"}), partitioned_group("p", 2, 2, min_groups=2)))] == ["ns/p/w/0", "ns/p/w/2"]


def test_a_highest_tier_name_is_the_tier_of_the_hypernodes_that_carry_it() -> None:
    objects = tree({"s0": ["n0", "n1"], "s1": ["n2", "n3"]}, {"s2": ["s0", "s1"]})
    for obj in objects:
        obj["spec"]["tierName"] = "rack" if obj["spec"]["tier"] == 1 else "spine"
    info = hypernode_harness.built(objects, ["n0", "n1", "n2", "n3"])
    assert info.resolve(hyper_node_info.NetworkTopology("hard", 0, "spine")) == hyper_node_info.NetworkTopology("hard", 2)
    unknown = info.resolve(hyper_node_info.NetworkTopology("hard", 0, "pod"))
    assert not unknown.hard and not unknown.soft
