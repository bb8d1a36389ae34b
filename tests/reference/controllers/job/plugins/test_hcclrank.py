"""The hcclrank job plugin (reference_scheduler/controllers/job/plugins/hcclrank.py) in memory, against
upstream's (plugins/distributed-framework/hcclrank/hcclrank.go): the rank annotation; it owns
nothing; its flags."""

from __future__ import annotations

import pytest

from reference_scheduler.controllers.job.plugins import hcclrank, keys
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
    # hcclrank (distributed-framework/hcclrank/hcclrank.go): the rank annotation.
    PodCase("hccl-master", {"hcclrank": []}, MASTER_WORKERS, "master", {"hccl-rank": "0"}),
    PodCase("hccl-worker-after-masters", {"hcclrank": []}, harness.job(task("master", replicas=2), task("worker", replicas=2)), "worker", {"hccl-rank": "3"}, index=1),
    PodCase("hccl-worker-without-master", {"hcclrank": ["--master=missing"]}, MASTER_WORKERS, "worker", {"hccl-rank": "1"}, index=1),
    PodCase("hccl-custom-roles", {"hcclrank": ["--master=lead", "--worker=member"]}, harness.job(task("lead", replicas=3), task("member", replicas=2)), "member", {"hccl-rank": "4"}, index=1),
    PodCase("hccl-other-task", {"hcclrank": []}, harness.job(task("master"), task("loader")), "loader", {"hccl-rank": None}),
    PodCase(
        "hccl-rank-env-wins",
        {"hcclrank": []},
        harness.job(task("master"), task("worker", replicas=2, containers=({"name": "main", "env": [{"name": "RANK", "value": "7"}]},))),
        "worker",
        {"hccl-rank": "7"},
    ),
    PodCase("hccl-annotation-kept", {"hcclrank": []}, harness.job(task("master", annotations={keys.HCCL_RANK: "5"})), "master", {"hccl-rank": "5"}),
    # With pytorch, hcclrank runs last and takes pytorch's RANK (worker 1 is rank 2, not 2 + 1).
    PodCase("hccl-after-pytorch", {"hcclrank": [], "pytorch": []}, harness.job(task("master", replicas=2), task("worker", replicas=2)), "worker", {"hccl-rank": "2"}, index=1),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    ObjectsCase("hcclrank-owns-nothing", {"hcclrank": []}, MASTER_WORKERS, {}),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)


FLAG_CASES = [
    FlagsCase("hccl-defaults", hcclrank.Hcclrank, (), {"master": "master", "worker": "worker"}),
    FlagsCase("hccl-custom", hcclrank.Hcclrank, ("--master=lead", "--worker=member"), {"master": "lead", "worker": "member"}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    plugin_harness.check_flags(case)
