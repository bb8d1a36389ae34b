"""The reference Job webhook (webhooks/validate_job.py), as Volcano's admit_job.go: a Job is admitted
only to a queue whose status says Open (a queue just created, not yet opened by the queue
controller, is refused like a closed one); and a task template whose container resources
Kubernetes' pod template validation refuses (Volcano runs it on every task) is refused in its
words: a negative request or limit, a request above its limit, and for a resource that cannot be
overcommitted (an extended resource such as a GPU) a request without a limit or unequal to it.

Upstream: pkg/webhooks/admission/jobs/validate/admit_job.go."""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from reference_scheduler.webhooks import validate_job


def job(queue: str) -> dict[str, Any]:
    task = {"name": "work", "replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}
    return {"metadata": {"name": "j"}, "spec": {"queue": queue, "tasks": [task]}}


def lookup(status: Mapping[str, Any] | None) -> validate_job.QueueLookup:
    q: dict[str, Any] = {"metadata": {"name": "q"}, "spec": {"weight": 1}}
    if status is not None:
        q["status"] = status
    return lambda name: q if name == "q" else None


@pytest.mark.parametrize(
    ("status", "refusal"),
    [
        ({"state": "Open"}, ""),
        (None, "can only submit job to queue with state `Open`, queue `q` status is ``;"),
        ({}, "can only submit job to queue with state `Open`, queue `q` status is ``;"),
        ({"state": "Closed"}, "can only submit job to queue with state `Open`, queue `q` status is `Closed`;"),
        ({"state": "Closing"}, "can only submit job to queue with state `Open`, queue `q` status is `Closing`;"),
    ],
)
def test_only_an_open_queue_takes_jobs(status: Mapping[str, Any] | None, refusal: str) -> None:
    assert validate_job.validate_create(job("q"), lookup(status), lambda: []) == refusal


def task(resources: dict[str, Any], field: str = "containers") -> dict[str, Any]:
    return {"name": "t", "replicas": 1, "template": {"spec": {field: [{"name": "a", "image": "x"}, {"name": "b", "image": "x", "resources": resources}]}}}


@pytest.mark.parametrize(
    ("resources", "field", "refusal"),
    [
        ({"requests": {"cpu": "-1"}}, "containers", 'spec.task[2].template.spec.containers[1].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0;'),
        ({"limits": {"memory": "-1Gi"}, "requests": {"memory": "1Gi"}}, "containers", 'spec.task[2].template.spec.containers[1].resources.limits[memory]: Invalid value: "-1Gi": must be greater than or equal to 0;'),
        ({"requests": {"nvidia.com/gpu": "-2"}}, "initContainers", 'spec.task[2].template.spec.initContainers[1].resources.requests[nvidia.com/gpu]: Invalid value: "-2": must be greater than or equal to 0;'),
        ({"requests": {"cpu": "0", "memory": "1Gi"}}, "containers", None),
        ({}, "containers", None),
        ({"requests": {"nvidia.com/gpu": "1"}}, "containers", "spec.task[2].template.spec.containers[1].resources.limits: Required value: Limit must be set for non overcommitable resources;"),
        ({"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}, "containers", 'spec.task[2].template.spec.containers[1].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2;'),
        ({"requests": {"cpu": "1500m"}, "limits": {"cpu": "1"}}, "initContainers", 'spec.task[2].template.spec.initContainers[1].resources.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1;'),
        ({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1"}}, "containers", None),
        ({"limits": {"nvidia.com/gpu": "2"}}, "containers", None),
        ({"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}}, "containers", None),
        ({"requests": {"hugepages-2Mi": "2Mi"}}, "containers", "spec.task[2].template.spec.containers[1].resources.limits: Required value: Limit must be set for non overcommitable resources;"),
        ({"requests": {"kubernetes.io/something": "1"}}, "containers", None),
    ],
    ids=["negative-cpu", "negative-memory-limit", "negative-init-scalar", "zero", "none", "gpu-request-without-limit", "gpu-request-below-limit", "cpu-request-above-limit", "cpu-below-limit", "gpu-limit-only", "gpu-equal", "hugepages-without-limit", "kubernetes-io-domain"],
)
def test_container_resources_are_refused_as_kubernetes_refuses_them(resources: dict[str, Any], field: str, refusal: str | None) -> None:
    found = validate_job.resource_requirement_errors(task(resources, field), 2)
    assert (found.strip() if found else None) == refusal


def test_an_mpi_job_needs_its_master_and_may_have_no_worker() -> None:
    """v1.15's rule (upstream 4cfa79f5f): only the master task is required."""
    master_only = job("q")
    master_only["spec"]["tasks"][0]["name"] = "master"
    master_only["spec"]["plugins"] = {"mpi": []}
    assert validate_job.validate_create(master_only, lookup({"state": "Open"}), lambda: []) == ""
    workers_only = job("q")
    workers_only["spec"]["plugins"] = {"mpi": ["--master=launcher"]}
    assert validate_job.validate_create(workers_only, lookup({"state": "Open"}), lambda: []) == "The specified mpi master task was not found"


def partitioned(replicas: int, partitions: dict[str, Any], min_available: int | None = None, topology: dict[str, Any] | None = None) -> dict[str, Any]:
    made = job("q")
    task = made["spec"]["tasks"][0]
    task.update({"replicas": replicas, "partitionPolicy": partitions})
    if min_available is not None:
        task["minAvailable"] = min_available
    if topology is not None:
        made["spec"]["networkTopology"] = topology
    return made


@pytest.mark.parametrize(
    ("made", "refusal"),
    [
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 2}), ""),
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1}, min_available=2), ""),
        # Without minPartitions a task minAvailable is free (the guard of v1.14.3 and v1.15.1).
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 2}, min_available=3), ""),
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 3}), "'Replicas' are not equal to TotalPartitions*PartitionSize in task: work, job: j"),
        (partitioned(4, {"totalPartitions": 0, "partitionSize": 2}), "'TotalPartitions' must be greater than 0 in task: work, job: j"),
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 0}), "'PartitionSize' must be greater than 0 in task: work, job: j"),
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 2}, min_available=2), "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: work, job: j"),
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 2, "networkTopology": {"highestTierAllowed": 1, "highestTierName": "rack"}}), "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"),
        (partitioned(4, {"totalPartitions": 2, "partitionSize": 2}, topology={"mode": "hard", "highestTierAllowed": 1, "highestTierName": "rack"}), "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"),
    ],
)
def test_a_task_partitions_cover_its_replicas_and_name_their_tier_once(made: dict[str, Any], refusal: str) -> None:
    """v1.14's partition rules (validatePartitionPolicy, validateNetworkTopology), on create and
    on update."""
    queues = lookup({"state": "Open"})
    assert validate_job.validate_create(made, queues, lambda: []) == refusal
    assert validate_job.validate_update(made, made) == refusal
