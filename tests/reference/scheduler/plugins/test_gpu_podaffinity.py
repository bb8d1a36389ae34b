"""In-memory cases for the gpu-podaffinity plugin (seed 002 section 7.2.2.2) on a cluster shaped
like the `supernodes-4x8` profile: twelve nodes of eight MetaX GPUs, supernodes of four nodes.

Nodes are matrix rows in name order (snode-0, snode-1, snode-10, snode-11, snode-2, ...), and
with no scoring plugin in the conf ties go to the first row: without the plugin a job of eight
pods lands on snode-0, -1, -10, -11, ..., across supernodes. Each case below says what the plugin
changes about that."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.scheduler import conf_load
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework
from reference_scheduler.scheduler.plugins import gpu_podaffinity, gpu_podaffinity_units
from tests.reference.builders import node, podgroup, queue
from tests.reference.scheduler_harness import PRIORITY_CLASSES, FakeCache

GPU = "metax-tech.com/gpu"
LABEL = "devices.vck.io/supernode"
GROUP = gpu_podaffinity_units.GROUP_SIZE
ATOMIC = gpu_podaffinity_units.ATOMIC_GROUP_SIZE
CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}, {name: gpu-podaffinity}]
- plugins: [{name: predicates}, {name: proportion}]
"""
NO_PLUGIN_CONF = CONF.replace(", {name: gpu-podaffinity}", "")
FLAT_CONF = CONF.replace("{name: gpu-podaffinity}", "{name: gpu-podaffinity, arguments: {gpu-podaffinity.weight: 0}}")


def supernode_of(name: str) -> str:
    return f"supernode-{int(name.rsplit('-', 1)[1]) // 4}"


def cluster() -> list[dict[str, Any]]:
    return [node(f"snode-{i}", "96", {LABEL: supernode_of(f"snode-{i}")}, **{GPU: "8"}) for i in range(12)]


def _pod(name: str, group: str, gpus: int, labels: dict[str, str], annotations: dict[str, str] | None = None,
         env: list[dict[str, str]] | None = None, node_name: str = "", phase: str = "Pending") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "resources": {"requests": {"cpu": "1", GPU: str(gpus)}, "limits": {GPU: str(gpus)}}}
    if env:
        container["env"] = env
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": labels, "creationTimestamp": "2026-01-01T00:00:00Z",
                     "annotations": {job_info.GROUP_NAME_ANNOTATION: group, **(annotations or {})}},
        "spec": {"schedulerName": "volcano", "nodeName": node_name, "containers": [container]},
        "status": {"phase": phase},
    }


def vcjob(job: str, workers: int, gpus: int = 8, sizes: dict[str, str] | None = None, on_master_only: bool = True) -> list[dict[str, Any]]:
    """A Volcano Job with the pytorch plugin: pods `<job>-master-0` and `<job>-worker-<i>`, as the
    kit's job controller and the pytorch job plugin make them (RANK: master 0, worker i+1)."""
    pods = []
    for task, index, rank in [("master", 0, 0)] + [("worker", i, i + 1) for i in range(workers)]:
        labels = {"volcano.sh/job-name": job, "volcano.sh/task-spec": task}
        annotations = {"volcano.sh/task-spec": task, "volcano.sh/task-index": str(index)}
        if sizes and (task == "master" or not on_master_only):
            annotations.update(sizes)
        env = [{"name": "MASTER_ADDR", "value": f"{job}-master-0.{job}"}, {"name": "RANK", "value": str(rank)}]
        pods.append(_pod(f"{job}-{task}-{index}", job, gpus, labels, annotations, env))
    return pods


def pytorchjob(job: str, workers: int, sizes: dict[str, str]) -> list[dict[str, Any]]:
    """Pods as Kubeflow's training-operator makes them for a PyTorchJob with Volcano gang scheduling."""
    pods = []
    for kind, index in [("master", 0)] + [("worker", i) for i in range(workers)]:
        labels = {"training.kubeflow.org/operator-name": "pytorchjob-controller", "training.kubeflow.org/job-name": job,
                  "training.kubeflow.org/replica-type": kind, "training.kubeflow.org/replica-index": str(index)}
        annotations = {"volcano.sh/task-spec": kind, **(sizes if kind == "master" else {})}
        pods.append(_pod(f"{job}-{kind}-{index}", job, 8, labels, annotations))
    return pods


def elasticjob(job: str, workers: int, sizes: dict[str, str]) -> list[dict[str, Any]]:
    """Worker pods as dlrover's master makes them for an ElasticJob (`<job>-edljob-worker-<i>`)."""
    return [
        _pod(f"{job}-edljob-worker-{i}", job, 8, {"app": "dlrover", "elasticjob.dlrover/name": job, "elasticjob.dlrover/replica-type": "worker",
                                                 "elasticjob.dlrover/replica-index": str(i), "elasticjob.dlrover/rank-index": str(i)}, dict(sizes))
        for i in range(workers)
    ]


def filler(name: str, node_name: str, gpus: int = 8) -> dict[str, Any]:
    """A pod of another scheduler already running on a node, holding its GPUs."""
    out = _pod(name, "", gpus, {}, node_name=node_name, phase="Running")
    out["spec"]["schedulerName"] = "default-scheduler"
    del out["metadata"]["annotations"][job_info.GROUP_NAME_ANNOTATION]
    return out


def run(pods: list[dict[str, Any]], podgroups: list[dict[str, Any]], conf_text: str = CONF, nodes: list[dict[str, Any]] | None = None) -> FakeCache:
    cache = FakeCache(nodes or cluster(), pods, podgroups, [queue()], PRIORITY_CLASSES)
    framework.run_cycle(cache, conf_load.parse(conf_text))
    return cache


def supernodes(cache: FakeCache, names: list[str]) -> set[str]:
    return {supernode_of(cache.binds[n]) for n in names}


def ranks(job: str, workers: int) -> list[str]:
    return [f"{job}-master-0"] + [f"{job}-worker-{i}" for i in range(workers)]


# --- the seed's example -------------------------------------------------------------------------
def test_the_seed_example_lands_as_two_units_each_in_one_supernode() -> None:
    cache = run(vcjob("pt", 7, sizes={GROUP: "32"}), [podgroup("pt", 8)])
    names = ranks("pt", 7)
    assert len(cache.binds) == 8, cache.binds
    assert len(supernodes(cache, names[:4])) == 1 and len(supernodes(cache, names[4:])) == 1, cache.binds


def test_without_the_plugin_the_first_unit_is_split() -> None:
    cache = run(vcjob("pt", 7, sizes={GROUP: "32"}), [podgroup("pt", 8)], NO_PLUGIN_CONF)
    assert len(supernodes(cache, ranks("pt", 7)[:4])) > 1, cache.binds


def test_units_follow_ranks_not_names() -> None:
    """Twelve pods fill the cluster: each unit of four consecutive ranks takes one whole supernode,
    although `worker-10` sorts before `worker-2` by name."""
    cache = run(vcjob("pt", 11, sizes={GROUP: "32"}), [podgroup("pt", 12)])
    names = ranks("pt", 11)
    assert len(cache.binds) == 12, cache.binds
    assert [len(supernodes(cache, names[i:i + 4])) for i in (0, 4, 8)] == [1, 1, 1], cache.binds
    assert len(supernodes(cache, names)) == 3


def test_the_annotation_on_every_pod_counts_the_same_as_on_the_master_alone() -> None:
    cache = run(vcjob("pt", 7, sizes={GROUP: "32"}, on_master_only=False), [podgroup("pt", 8)])
    names = ranks("pt", 7)
    assert len(supernodes(cache, names[:4])) == 1 and len(supernodes(cache, names[4:])) == 1, cache.binds


# --- no supernode with room -----------------------------------------------------------------------
FILLERS = [filler("f0", "snode-0"), filler("f1", "snode-4"), filler("f2", "snode-8")]


def test_no_supernode_with_room_for_a_unit_leaves_the_job_unbound() -> None:
    """Nine free nodes (72 GPUs) for 64 GPUs, but three free nodes per supernode and units of four."""
    cache = run(vcjob("pt", 7, sizes={GROUP: "32"}) + FILLERS, [podgroup("pt", 8)])
    assert cache.binds == {}
    condition = {c["type"]: c for c in cache.statuses["pt"]["conditions"]}["Unschedulable"]
    assert condition["reason"] == "NotEnoughResources" and "has no room for the 4 pods" in condition["message"], condition


def test_without_the_plugin_the_same_job_binds_across_supernodes() -> None:
    cache = run(vcjob("pt", 7, sizes={GROUP: "32"}) + FILLERS, [podgroup("pt", 8)], NO_PLUGIN_CONF)
    assert len(cache.binds) == 8


def test_a_unit_waits_for_room_held_by_another_jobs_started_unit() -> None:
    """`old` has one of its unit of two running on snode-0 and one waiting: that one may only go
    to supernode-0, so `new` (first, by priority; a unit of three) may not start there although
    three nodes of it are free."""
    old = vcjob("old", 1, sizes={GROUP: "16"})
    old[0]["spec"]["nodeName"], old[0]["status"]["phase"] = "snode-0", "Running"
    new = vcjob("new", 2, sizes={GROUP: "24"})
    cache = run(old + new, [podgroup("old", 2), podgroup("new", 3, priority="high")])
    assert cache.binds["old-worker-0"] in ("snode-1", "snode-2", "snode-3"), cache.binds
    assert supernodes(cache, ranks("new", 2)) != {"supernode-0"} and len(supernodes(cache, ranks("new", 2))) == 1, cache.binds


# --- the atomic variant ---------------------------------------------------------------------------
# Free: snode-1 and -2 (supernode-0), -4 and -5, -8 and -10; by name snode-1, -10, -2, ... alternate.
ATOMIC_FILLERS = [filler(f"f{i}", f"snode-{i}") for i in (0, 3, 6, 7, 9, 11)]


def test_atomic_sub_units_each_share_a_supernode_when_the_unit_cannot() -> None:
    """Two free nodes per supernode: the unit of four pods cannot share one, its two sub-units of
    two do; without the atomic size the same job would not be scheduled at all."""
    job = vcjob("pt", 3, sizes={GROUP: "32", ATOMIC: "16"})
    cache = run(job + ATOMIC_FILLERS, [podgroup("pt", 4)])
    names = ranks("pt", 3)
    assert len(cache.binds) == 4, cache.binds
    assert len(supernodes(cache, names[:2])) == 1 and len(supernodes(cache, names[2:])) == 1, cache.binds
    strict = run(vcjob("pt", 3, sizes={GROUP: "32"}) + ATOMIC_FILLERS, [podgroup("pt", 4)])
    assert strict.binds == {}


def test_without_the_plugin_a_sub_unit_is_split() -> None:
    job = vcjob("pt", 3, sizes={GROUP: "32", ATOMIC: "16"})
    cache = run(job + ATOMIC_FILLERS, [podgroup("pt", 4)], NO_PLUGIN_CONF)
    names = ranks("pt", 3)
    assert len(supernodes(cache, names[:2])) > 1 or len(supernodes(cache, names[2:])) > 1, cache.binds


def test_atomic_unit_prefers_one_supernode() -> None:
    """On an empty cluster the second sub-unit joins the first in supernode-0; with the
    preference weighed 0 it starts at the first free node by name, snode-10 (supernode-2)."""
    names = ranks("pt", 3)
    cache = run(vcjob("pt", 3, sizes={GROUP: "32", ATOMIC: "16"}), [podgroup("pt", 4)])
    assert supernodes(cache, names) == {"supernode-0"}, cache.binds
    flat = run(vcjob("pt", 3, sizes={GROUP: "32", ATOMIC: "16"}), [podgroup("pt", 4)], FLAT_CONF)
    assert len(supernodes(flat, names[:2])) == 1 and len(supernodes(flat, names[2:])) == 1 and len(supernodes(flat, names)) == 2, flat.binds


# --- invalid sizes ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("sizes", "workers", "fragment"), [
    ({GROUP: "24"}, 7, "the job's 64 metax-tech.com/gpu are not a multiple of metax-tech.com/gpu-group-size 24"),
    ({GROUP: "12"}, 5, "metax-tech.com/gpu-group-size 12 is not a multiple of 8, the metax-tech.com/gpu of pod pt-master-0 and 5 more"),
    ({GROUP: "32", ATOMIC: "24"}, 7, "metax-tech.com/atomic-gpu-group-size 24 does not divide metax-tech.com/gpu-group-size 32"),
    ({GROUP: "thirty-two"}, 7, "metax-tech.com/gpu-group-size must be a positive integer, got 'thirty-two'"),
    ({GROUP: "0"}, 7, "must be a positive integer, got '0'"),
], ids=["total-not-a-multiple", "not-a-multiple-of-a-pod", "atomic-not-dividing", "not-a-number", "zero"])
def test_invalid_sizes_keep_the_job_unbound_with_a_reason(sizes: dict[str, str], workers: int, fragment: str) -> None:
    cache = run(vcjob("pt", workers, sizes=sizes), [podgroup("pt", workers + 1)])
    assert cache.binds == {}
    condition = {c["type"]: c for c in cache.statuses["pt"]["conditions"]}["Unschedulable"]
    assert condition["reason"] == gpu_podaffinity.INVALID_REASON and fragment in condition["message"], condition
    events = [e for e in cache.events if e[0] == "pt" and e[1] == "Unschedulable"]
    assert events and fragment in events[0][2]


def test_gangs_message_carries_the_reason_when_gang_closes_last() -> None:
    """With gpu-podaffinity before gang in the conf, gang's condition is the one left; it says why."""
    swapped = CONF.replace("{name: gang}, {name: conformance}, {name: gpu-podaffinity}", "{name: gpu-podaffinity}, {name: gang}, {name: conformance}")
    cache = run(vcjob("pt", 7, sizes={GROUP: "24"}), [podgroup("pt", 8)], swapped)
    condition = {c["type"]: c for c in cache.statuses["pt"]["conditions"]}["Unschedulable"]
    assert "gpu-podaffinity: the job's 64" in condition["message"], condition


def test_pods_disagreeing_on_the_size_are_invalid() -> None:
    pods = vcjob("pt", 3, sizes={GROUP: "32"})
    pods[1]["metadata"]["annotations"][GROUP] = "16"
    cache = run(pods, [podgroup("pt", 4)])
    assert cache.binds == {}
    assert "disagree" in {c["type"]: c for c in cache.statuses["pt"]["conditions"]}["Unschedulable"]["message"]


def test_without_the_plugin_an_invalid_size_is_ignored() -> None:
    cache = run(vcjob("pt", 7, sizes={GROUP: "24"}), [podgroup("pt", 8)], NO_PLUGIN_CONF)
    assert len(cache.binds) == 8


# --- which jobs the plugin works on -------------------------------------------------------------------
def test_a_job_that_is_not_pytorch_is_left_alone() -> None:
    """Pods of a plain Volcano Job (no pytorch plugin env) with the annotation: the plugin does not
    work on them, as the seed says, so they are placed as without it."""
    pods = vcjob("plain", 7, sizes={GROUP: "32"})
    for p in pods:
        del p["spec"]["containers"][0]["env"]
    with_plugin = run(pods, [podgroup("plain", 8)])
    without = run(pods, [podgroup("plain", 8)], NO_PLUGIN_CONF)
    assert with_plugin.binds == without.binds and len(with_plugin.binds) == 8


@pytest.mark.parametrize("make", [pytorchjob, lambda job, n, sizes: elasticjob(job, n + 1, sizes)], ids=["pytorchjob", "elasticjob"])
def test_operator_shaped_pytorch_jobs_are_placed_by_unit(make: Any) -> None:
    pods = make("op", 7, {GROUP: "32"})
    names = [p["metadata"]["name"] for p in pods]
    cache = run(pods, [podgroup("op", 8)])
    assert len(cache.binds) == 8, cache.binds
    assert len(supernodes(cache, names[:4])) == 1 and len(supernodes(cache, names[4:])) == 1, cache.binds
    without = run(pods, [podgroup("op", 8)], NO_PLUGIN_CONF)
    assert len(supernodes(without, names[:4])) > 1, without.binds


def test_a_kubeflow_master_comes_before_the_workers_whatever_the_names() -> None:
    pods = pytorchjob("op", 3, {GROUP: "16"})
    for p in pods:
        p["metadata"]["name"] = p["metadata"]["name"].replace("master", "zz-master")
    job = job_info.JobInfo(uid="ns/op", name="op", namespace="ns", queue="default", min_available=4, min_task_member={}, podgroup=podgroup("op", 4))
    for p in pods:
        task = job_info.TaskInfo.from_pod(p, job.uid)
        job.tasks[task.uid] = task
    plan = gpu_podaffinity_units.plan(job, GPU)
    assert isinstance(plan, gpu_podaffinity_units.Units)
    assert [[job.tasks[u].name for u in sub] for unit in plan.units for sub in unit] == [["op-zz-master-0", "op-worker-0"], ["op-worker-1", "op-worker-2"]]


def test_a_node_in_no_supernode_takes_no_pod_of_a_unit() -> None:
    """`plain-0` (first by name, eight GPUs, no supernode label) is where the master would go
    without the plugin; with it no pod of a unit may go there."""
    nodes = [node("plain-0", "96", {}, **{GPU: "8"})] + cluster()
    cache = run(vcjob("pt", 3, sizes={GROUP: "32"}), [podgroup("pt", 4)], nodes=nodes)
    assert len(cache.binds) == 4 and "plain-0" not in cache.binds.values(), cache.binds
    without = run(vcjob("pt", 3, sizes={GROUP: "32"}), [podgroup("pt", 4)], NO_PLUGIN_CONF, nodes=nodes)
    assert without.binds["pt-master-0"] == "plain-0"


def test_a_size_problem_is_told_once_when_no_atomic_size_is_given() -> None:
    cache = run(vcjob("pt", 5, sizes={GROUP: "12"}), [podgroup("pt", 6)])
    message = {c["type"]: c for c in cache.statuses["pt"]["conditions"]}["Unschedulable"]["message"]
    assert ATOMIC not in message and message.count("is not a multiple of 8") == 1, message
