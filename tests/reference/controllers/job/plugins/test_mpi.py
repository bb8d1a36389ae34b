"""The mpi job plugin (reference_scheduler/controllers/job/plugins/mpi.py) in memory, against
upstream's (plugins/distributed-framework/mpi/mpi.go): the ssh port everywhere and the workers'
hosts for the master; it owns nothing; its flags."""

from __future__ import annotations

import pytest

from reference_scheduler.controllers.job.plugins import mpi
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task
from tests.reference.controllers.job.plugins import plugin_harness
from tests.reference.controllers.job.plugins.plugin_harness import (
    MASTER_WORKERS,
    FlagsCase,
    ObjectsCase,
    PodCase,
)

POD_CASES = [
    # mpi (distributed-framework/mpi/mpi.go): the ssh port everywhere, the workers' hosts for the
    # master.
    PodCase("mpi-master", {"mpi": []}, MASTER_WORKERS, "master", {"env:main": {"MPI_HOST": "tj-worker-0.tj,tj-worker-1.tj"}, "ports:main": {"mpijob-port": 22}}),
    PodCase("mpi-worker", {"mpi": []}, MASTER_WORKERS, "worker", {"env:main": {}, "ports:main": {"mpijob-port": 22}}, index=1),
    PodCase(
        "mpi-custom-flags",
        {"mpi": ["--master=launcher", "--worker=trainer", "--port=5000"]},
        harness.job(task("launcher"), task("trainer", replicas=3)),
        "launcher",
        {"env:main": {"MPI_HOST": "tj-trainer-0.tj,tj-trainer-1.tj,tj-trainer-2.tj"}, "ports:main": {"mpijob-port": 5000}},
    ),
    PodCase("mpi-master-without-workers", {"mpi": ["--worker=missing"]}, MASTER_WORKERS, "master", {"env:main": {}, "ports:main": {}}),
    PodCase(
        "mpi-port-already-open",
        {"mpi": []},
        harness.job(task("master", containers=({"name": "main", "ports": [{"name": "ssh", "containerPort": 22}]},)), task("worker")),
        "master",
        {"ports:main": {"ssh": 22}},
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    ObjectsCase("mpi-owns-nothing", {"mpi": []}, MASTER_WORKERS, {}),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)


FLAG_CASES = [
    FlagsCase("mpi-defaults", mpi.Mpi, (), {"master": "master", "worker": "worker", "port": 22}),
    FlagsCase("mpi-custom", mpi.Mpi, ("--master=launcher", "--worker=trainer", "--port=5000"), {"master": "launcher", "worker": "trainer", "port": 5000}),
    # Go's flag package takes one dash as well as two.
    FlagsCase("mpi-single-dash", mpi.Mpi, ("-port=2222", "-master=head"), {"master": "head", "port": 2222}),
    # An unknown flag is ignored, the rest still read (Volcano logs the error and goes on).
    FlagsCase("mpi-unknown-flag", mpi.Mpi, ("--no-such-flag=1", "--port=23"), {"master": "master", "port": 23}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    plugin_harness.check_flags(case)
