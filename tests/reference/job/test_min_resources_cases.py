"""A Job's PodGroup minResources (pods.min_resources over controllers/quota.py) as tables: which
pods the gang counts, their quota usage, and the quantities as the API's Go client writes them.

Upstream: pkg/controllers/job/job_controller_actions.go (calcPGMinResources),
job_controller_util.go (CalcFirstCountResources, CalcPGMinResources), pkg/controllers/util/util.go
(GetPodQuotaUsage); the first case is test/e2e/jobp/job_controlled_resource.go:140."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from reference_scheduler.controllers import quota
from reference_scheduler.controllers.job import pods
from reference_scheduler.kube import quantity

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


def test_pod_usage_counts_init_containers_hugepages_and_extended_resources() -> None:
    spec = {
        "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "3"}}}],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "1", "hugepages-2Mi": "4Mi", "example.com/foo": "2"}, "limits": {"memory": "1Gi"}}},
            {"name": "b", "resources": {"requests": {"cpu": "1", "ephemeral-storage": "1Gi"}}},
        ],
    }
    assert quota.as_resource_list(quota.pod_usage(spec)) == {
        "count/pods": "1", "pods": "1",
        # The init container's 3 CPUs exceed the containers' 2.
        "cpu": "3", "requests.cpu": "3",
        "limits.memory": "1Gi",
        "ephemeral-storage": "1Gi", "requests.ephemeral-storage": "1Gi",
        "hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi",
        "example.com/foo": "2", "requests.example.com/foo": "2",
    }


def test_a_finished_pod_counts_only_as_an_object() -> None:
    assert quota.as_resource_list(quota.pod_usage({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}, terminal=True)) == {"count/pods": "1"}


@pytest.mark.parametrize(
    ("given", "times", "want"),
    [
        ("1000m", 2, "2"), ("500m", 3, "1500m"), ("1000Mi", 2, "2000Mi"), ("512Mi", 3, "1536Mi"),
        ("1G", 2, "2G"), ("2k", 3, "6k"), ("1536", 1, "1536"), ("1.5", 2, "3"), ("100m", 10, "1"),
        ("0", 5, "0"), ("512", 1, "512"),
    ],
)
def test_quantities_are_written_as_go_writes_them(given: str, times: int, want: str) -> None:
    milli, format_ = quantity.exact_milli(given)
    assert quantity.canonical(milli * times, format_) == want
