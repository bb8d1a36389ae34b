"""The env job plugin (reference_scheduler/controllers/job/plugins/env.py) in memory, against
upstream's (plugins/env/env.go): the task index on every container and init container; it owns
nothing."""

from __future__ import annotations

import pytest

from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task
from tests.reference.controllers.job.plugins import plugin_harness
from tests.reference.controllers.job.plugins.plugin_harness import (
    MASTER_WORKERS,
    ObjectsCase,
    PodCase,
)

POD_CASES = [
    # env (plugins/env/env.go): the index on every container and init container.
    PodCase(
        "env-index",
        {"env": []},
        harness.job(task("worker", replicas=2, initContainers=[{"name": "init", "image": "busybox"}])),
        "worker",
        {"env:main": {"VK_TASK_INDEX": "1", "VC_TASK_INDEX": "1"}, "init-env:init": {"VK_TASK_INDEX": "1", "VC_TASK_INDEX": "1"}},
        index=1,
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    ObjectsCase("env-owns-nothing", {"env": []}, MASTER_WORKERS, {}),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)
