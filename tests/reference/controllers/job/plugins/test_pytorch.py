"""The pytorch job plugin (reference_scheduler/controllers/job/plugins/pytorch.py) in memory, against
upstream's (plugins/distributed-framework/pytorch/pytorch.go): master rank 0, workers 1.., one
world; it owns nothing; its flags."""

from __future__ import annotations

import pytest

from reference_scheduler.controllers.job.plugins import pytorch
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task
from tests.reference.controllers.job.plugins import plugin_harness
from tests.reference.controllers.job.plugins.plugin_harness import (
    MASTER_WORKERS,
    FlagsCase,
    ObjectsCase,
    PodCase,
    svc_env,
)

POD_CASES = [
    # pytorch (distributed-framework/pytorch/pytorch.go): master rank 0, workers 1.., one world.
    PodCase(
        "pytorch-master",
        {"pytorch": []},
        MASTER_WORKERS,
        "master",
        {"env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "0"}, "ports:main": {"pytorchjob-port": 23456}},
    ),
    PodCase(
        "pytorch-worker",
        {"pytorch": []},
        MASTER_WORKERS,
        "worker",
        {"env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "2"}},
        index=1,
    ),
    PodCase(
        "pytorch-custom-flags",
        {"pytorch": ["--master=chief", "--worker=replica", "--port=29500"]},
        harness.job(task("chief"), task("replica", replicas=3)),
        "replica",
        {"env:main": {"MASTER_ADDR": "tj-chief-0.tj", "MASTER_PORT": "29500", "WORLD_SIZE": "4", "RANK": "1"}, "ports:main": {"pytorchjob-port": 29500}},
    ),
    # A task that is neither master nor worker joins no rank and is not counted in the world.
    PodCase(
        "pytorch-other-task",
        {"pytorch": []},
        harness.job(task("master"), task("worker", replicas=2), task("loader", replicas=4)),
        "loader",
        {"env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3"}},
    ),
    PodCase("pytorch-without-master", {"pytorch": []}, harness.job(task("worker", replicas=2)), "worker", {"env:main": {}, "ports:main": {}}),
    PodCase(
        "pytorch-master-template-names",
        {"pytorch": []},
        harness.job(task("master", hostname="lead", subdomain="grp"), task("worker")),
        "worker",
        {"env:main": {"MASTER_ADDR": "lead.grp", "MASTER_PORT": "23456", "WORLD_SIZE": "2", "RANK": "1"}},
    ),
    PodCase(
        "pytorch-not-init-containers",
        {"pytorch": []},
        harness.job(task("master", initContainers=[{"name": "init", "image": "busybox"}])),
        "master",
        {"init-env:init": {}, "env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "1", "RANK": "0"}},
    ),
    # Together, as a framework job gets them: svc names the pods, pytorch points at the master.
    PodCase(
        "pytorch-with-svc",
        {"pytorch": [], "svc": []},
        MASTER_WORKERS,
        "worker",
        {"hostname": "tj-worker-0", "subdomain": "tj", "env:main": {**svc_env("tj-svc", "MASTER", "WORKER"), "MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "1"}},
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    ObjectsCase("pytorch-owns-nothing", {"pytorch": []}, MASTER_WORKERS, {}),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)


FLAG_CASES = [
    FlagsCase("pytorch-defaults", pytorch.Pytorch, (), {"master": "master", "worker": "worker", "port": 23456}),
    FlagsCase("pytorch-custom", pytorch.Pytorch, ("--master=chief", "--worker=replica", "--port=29500"), {"master": "chief", "worker": "replica", "port": 29500}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    plugin_harness.check_flags(case)
