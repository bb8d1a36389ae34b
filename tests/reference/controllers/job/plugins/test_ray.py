"""The ray job plugin (reference_scheduler/controllers/job/plugins/ray.py) in memory, against
upstream's (plugins/distributed-framework/ray/ray.go): the head starts the cluster, workers join it;
the Service in front of the head it owns; its flags."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.controllers.job.plugins import ray
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task
from tests.reference.controllers.job.plugins import plugin_harness
from tests.reference.controllers.job.plugins.plugin_harness import (
    HEAD_WORKERS,
    SELECTOR,
    FlagsCase,
    ObjectsCase,
    PodCase,
)


def ray_head_command(port: int = 6379, dashboard: int = 8265, client: int = 10001) -> list[str]:
    return ["sh", "-c", f"ray start --head --block --dashboard-host=0.0.0.0 --port={port} --dashboard-port={dashboard} --ray-client-server-port={client}"]


def ray_ports(port: int = 6379, dashboard: int = 8265, client: int = 10001) -> list[dict[str, Any]]:
    return [
        {"name": "gcs", "port": port, "targetPort": "gcs", "protocol": "TCP"},
        {"name": "dashboard", "port": dashboard, "targetPort": "dashboard", "protocol": "TCP"},
        {"name": "client-server", "port": client, "targetPort": "client-server", "protocol": "TCP"},
    ]

POD_CASES = [
    # ray (distributed-framework/ray/ray.go): the head starts the cluster, workers join it.
    PodCase(
        "ray-head",
        {"ray": []},
        HEAD_WORKERS,
        "head",
        {"command:head": ray_head_command(), "ports:head": {"gcs": 6379, "dashboard": 8265, "client-server": 10001}},
    ),
    PodCase("ray-worker", {"ray": []}, HEAD_WORKERS, "worker", {"command:worker": ["sh", "-c", "ray start --block --address=tj-head-0.tj:6379"], "ports:worker": {}}, index=1),
    PodCase(
        "ray-own-command-kept",
        {"ray": []},
        harness.job(task("head", containers=({"name": "head", "command": ["python", "serve.py"]},)), task("worker", containers=({"name": "worker", "command": ["python", "work.py"]},))),
        "head",
        {"command:head": ["python", "serve.py"], "ports:head": {"gcs": 6379, "dashboard": 8265, "client-server": 10001}},
    ),
    PodCase(
        "ray-worker-own-command-kept",
        {"ray": []},
        harness.job(task("head", containers=("head",)), task("worker", containers=({"name": "worker", "command": ["python", "work.py"]},))),
        "worker",
        {"command:worker": ["python", "work.py"]},
    ),
    PodCase(
        "ray-sidecar-untouched",
        {"ray": []},
        harness.job(task("head", containers=("head", "sidecar")), task("worker", containers=("worker",))),
        "head",
        {"command:sidecar": None, "ports:sidecar": {}, "command:head": ray_head_command()},
    ),
    PodCase(
        "ray-worker-to-head-template-names",
        {"ray": []},
        harness.job(task("head", containers=("head",), hostname="ray-head", subdomain="raygrp"), task("worker", containers=("worker",))),
        "worker",
        {"command:worker": ["sh", "-c", "ray start --block --address=ray-head.raygrp:6379"]},
    ),
    PodCase(
        "ray-custom-flags-head",
        {"ray": ["--head=boss", "--headContainer=ray-head", "--worker=minion", "--workerContainer=ray-worker", "--port=7000", "--dashboardPort=9000", "--clientPort=11000"]},
        harness.job(task("boss", containers=("ray-head",)), task("minion", containers=("ray-worker",))),
        "boss",
        {"command:ray-head": ray_head_command(7000, 9000, 11000), "ports:ray-head": {"gcs": 7000, "dashboard": 9000, "client-server": 11000}},
    ),
    PodCase(
        "ray-custom-flags-worker",
        {"ray": ["--head=boss", "--headContainer=ray-head", "--worker=minion", "--workerContainer=ray-worker", "--port=7000"]},
        harness.job(task("boss", containers=("ray-head",)), task("minion", containers=("ray-worker",))),
        "minion",
        {"command:ray-worker": ["sh", "-c", "ray start --block --address=tj-boss-0.tj:7000"]},
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    # ray: a Service in front of the head's three ports.
    ObjectsCase(
        "ray-head-service",
        {"ray": []},
        HEAD_WORKERS,
        {"Service/tj-head-svc": {"spec": {"selector": {**SELECTOR, "volcano.sh/task-spec": "head"}, "ports": ray_ports()}}},
    ),
    ObjectsCase(
        "ray-custom-head-service",
        {"ray": ["--head=boss", "--port=7000", "--dashboardPort=9000", "--clientPort=11000"]},
        HEAD_WORKERS,
        {"Service/tj-head-svc": {"spec": {"selector": {**SELECTOR, "volcano.sh/task-spec": "boss"}, "ports": ray_ports(7000, 9000, 11000)}}},
    ),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)


FLAG_CASES = [
    FlagsCase("ray-defaults", ray.Ray, (), {"head": "head", "headContainer": "head", "worker": "worker", "workerContainer": "worker", "port": 6379, "dashboardPort": 8265, "clientPort": 10001}),
    FlagsCase("ray-custom", ray.Ray, ("--headContainer=rh", "--dashboardPort=9000", "--clientPort=11000"), {"head": "head", "headContainer": "rh", "dashboardPort": 9000, "clientPort": 11000}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    plugin_harness.check_flags(case)


def test_ray_without_head_task_is_refused() -> None:
    plugin = ray.Ray("ray", [])
    job = harness.job(task("worker", containers=("worker",)))
    with pytest.raises(ValueError, match="no head task 'head'"):
        plugin.on_pod_create(harness.pod_of(job, "worker"), job)
