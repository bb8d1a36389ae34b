"""A Job's PodGroup minResources (controllers/job/pods.py: min_resources, over
controllers/quota.py) as a table: which pods the gang counts and what they ask for, in every
quota form.

Upstream: pkg/controllers/job/job_controller_actions.go (calcPGMinResources),
job_controller_util.go (CalcFirstCountResources, CalcPGMinResources); the first case is
test/e2e/jobp/job_controlled_resource.go:140."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from reference_scheduler.controllers.job import defaults, pods

Obj = dict[str, Any]


def task(name: str, replicas: int, min_available: int | None = None, requests: Obj | None = None, limits: Obj | None = None, priority_class: str = "") -> Obj:
    resources: Obj = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    spec: Obj = {"containers": [{"name": "main", "image": "busybox", "resources": resources}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    out: Obj = {"name": name, "replicas": replicas, "template": {"spec": spec}}
    if min_available is not None:
        out["minAvailable"] = min_available
    return out


def job(min_available: int, *tasks: Obj) -> Obj:
    return {"metadata": {"name": "j", "uid": "u"}, "spec": {"minAvailable": min_available, "tasks": list(tasks)}}


GPU_POD = {"cpu": "1000m", "memory": "1000Mi", "nvidia.com/gpu": "1"}


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    job: Obj
    want: dict[str, str]
    priorities: dict[str, int] = dataclasses.field(default_factory=dict)


CASES = [
    Case(
        "upstream e2e: two tasks of one pod, requests and limits, every quota form",
        job(2, task("task-1", 1, 1, GPU_POD, GPU_POD), task("task-2", 1, 1, GPU_POD, GPU_POD)),
        {
            "count/pods": "2", "pods": "2", "cpu": "2", "requests.cpu": "2", "limits.cpu": "2",
            "memory": "2000Mi", "requests.memory": "2000Mi", "limits.memory": "2000Mi",
            "nvidia.com/gpu": "2", "requests.nvidia.com/gpu": "2",
        },
    ),
    Case(
        "minAvailable covers the tasks' minAvailable: those first, then the rest of the replicas",
        job(3, task("small", 3, 1, {"cpu": "1"}), task("big", 2, 2, {"cpu": "2"})),
        {"count/pods": "3", "pods": "3", "cpu": "5", "requests.cpu": "5"},
    ),
    Case(
        "filling up to minAvailable takes the spare replicas in task order",
        job(4, task("a", 3, 1, {"cpu": "500m"}), task("b", 3, 1, {"cpu": "2"})),
        {"count/pods": "4", "pods": "4", "cpu": "3500m", "requests.cpu": "3500m"},
    ),
    Case(
        "minAvailable below the tasks' minAvailable: the first minAvailable pods in task order",
        job(2, task("a", 3, 3, {"cpu": "1"}), task("b", 2, 2, {"cpu": "4"})),
        {"count/pods": "2", "pods": "2", "cpu": "2", "requests.cpu": "2"},
    ),
    Case(
        "a higher-priority task's pods are counted first",
        job(2, task("a", 3, 3, {"cpu": "1"}), task("b", 2, 2, {"cpu": "4"}, priority_class="high")),
        {"count/pods": "2", "pods": "2", "cpu": "8", "requests.cpu": "8"},
        priorities={"high": 1000},
    ),
    Case(
        "an amount is written in the format of its first quantity",
        job(3, task("a", 3, 3, {"memory": "1G", "cpu": "100m"})),
        {"count/pods": "3", "pods": "3", "cpu": "300m", "requests.cpu": "300m", "memory": "3G", "requests.memory": "3G"},
    ),
    Case("a job that needs no pod asks for nothing", job(0, task("a", 0, 0, {"cpu": "1"})), {}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_min_resources(case: Case) -> None:
    assert pods.min_resources(case.job, lambda name: case.priorities.get(name, 0)) == case.want


def test_a_task_with_partitions_gives_each_pod_its_partition_and_the_podgroup_a_sub_group_policy() -> None:
    """v1.14: pod label volcano.sh/partition-id = index // partitionSize; one subGroupPolicy entry
    per partitioned task, grouping its pods by that label, with the partition's topology; the
    webhook's default task minAvailable is minPartitions x partitionSize when minPartitions is
    given, else the replicas (v1.14.3, v1.15.1). Upstream: createJobPod, buildSubGroupPolicy,
    mutate_job.go."""
    parted = task("w", 6, requests={"cpu": "1"})
    parted["partitionPolicy"] = {"totalPartitions": 3, "partitionSize": 2, "minPartitions": 2, "networkTopology": {"mode": "hard", "highestTierAllowed": 1}}
    plain = task("plain", 1, requests={"cpu": "1"})
    made = defaults.with_defaults(job(0, parted, plain))
    made["metadata"]["namespace"] = "ns"
    assert [t["minAvailable"] for t in made["spec"]["tasks"]] == [4, 1]
    assert made["spec"]["minAvailable"] == 5
    labels = [pods.make_pod(made, made["spec"]["tasks"][0], i, 0, 0)["metadata"]["labels"].get(pods.PARTITION_ID) for i in range(6)]
    assert labels == ["0", "0", "1", "1", "2", "2"]
    assert pods.PARTITION_ID not in pods.make_pod(made, made["spec"]["tasks"][1], 0, 0, 0)["metadata"]["labels"]
    assert pods.sub_group_policy(made) == [{
        "name": "w", "subGroupSize": 2, "minSubGroups": 2,
        "labelSelector": {"matchLabels": {pods.TASK_SPEC: "w"}}, "matchLabelKeys": [pods.PARTITION_ID],
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }]
    del parted["partitionPolicy"]["minPartitions"]
    assert defaults.with_defaults(job(0, parted))["spec"]["tasks"][0]["minAvailable"] == 6


def test_the_job_annotations_the_scheduler_reads_are_copied_to_each_pod() -> None:
    """createJobPod copies the Job's preemptable, cooldown-time and revocable-zone annotations and
    one JDB annotation (min-available before max-unavailable), and its preemptable and
    cooldown-time labels; nothing else of the Job's metadata."""
    made = defaults.with_defaults(job(1, task("w", 1, requests={"cpu": "1"})))
    made["metadata"].update(namespace="ns", annotations={
        "volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "15s", "volcano.sh/revocable-zone": "*",
        "volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "50%", "other": "x",
    }, labels={"volcano.sh/preemptable": "true", "volcano.sh/cooldown-time": "5s", "team": "a"})
    meta = pods.make_pod(made, made["spec"]["tasks"][0], 0, 0, 0)["metadata"]
    assert {k: v for k, v in meta["annotations"].items() if k.startswith("volcano.sh/") and k not in (pods.TASK_INDEX, pods.TASK_SPEC, pods.JOB_NAME, pods.QUEUE_NAME, pods.JOB_VERSION, pods.TEMPLATE_KEY, pods.RETRY_COUNT)} == {
        "volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "15s", "volcano.sh/revocable-zone": "*", "volcano.sh/jdb-min-available": "1",
    }
    assert "other" not in meta["annotations"] and "team" not in meta["labels"]
    assert meta["labels"]["volcano.sh/preemptable"] == "true" and meta["labels"]["volcano.sh/cooldown-time"] == "5s"
    del made["metadata"]["annotations"]["volcano.sh/jdb-min-available"]
    assert pods.make_pod(made, made["spec"]["tasks"][0], 0, 0, 0)["metadata"]["annotations"]["volcano.sh/jdb-max-unavailable"] == "50%"
