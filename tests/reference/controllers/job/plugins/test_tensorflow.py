"""The tensorflow job plugin (reference_scheduler/controllers/job/plugins/tensorflow.py) in memory,
against upstream's (plugins/distributed-framework/tensorflow/tensorflow.go): TF_CONFIG with the
roles in a fixed order; it owns nothing; its flags."""

from __future__ import annotations

import json

import pytest

from reference_scheduler.controllers.job.plugins import tensorflow
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task
from tests.reference.controllers.job.plugins import plugin_harness
from tests.reference.controllers.job.plugins.plugin_harness import (
    MASTER_WORKERS,
    FlagsCase,
    ObjectsCase,
    PodCase,
)


def tf_config(cluster: dict[str, list[str]], kind: str, index: int) -> str:
    return json.dumps({"cluster": cluster, "task": {"type": kind, "index": index}}, separators=(",", ":"))


TF_JOB = harness.job(task("ps"), task("worker", replicas=2))
TF_HOSTS = {"ps": ["tj-ps-0.tj:2222"], "worker": ["tj-worker-0.tj:2222", "tj-worker-1.tj:2222"]}

POD_CASES = [
    # tensorflow (distributed-framework/tensorflow/tensorflow.go): TF_CONFIG, roles in a fixed order.
    PodCase("tf-worker", {"tensorflow": []}, TF_JOB, "worker", {"env:main": {"TF_CONFIG": tf_config(TF_HOSTS, "worker", 1)}}, index=1),
    PodCase("tf-ps", {"tensorflow": []}, TF_JOB, "ps", {"env:main": {"TF_CONFIG": tf_config(TF_HOSTS, "ps", 0)}}),
    PodCase("tf-single-pod", {"tensorflow": []}, harness.job(task("worker")), "worker", {"env:main": {}}),
    PodCase(
        "tf-custom-flags",
        {"tensorflow": ["--ps=param", "--worker=trainer", "--chief=boss", "--evaluator=judge", "--port=3333"]},
        harness.job(task("boss"), task("judge"), task("trainer", replicas=2), task("param")),
        "boss",
        {"env:main": {"TF_CONFIG": tf_config({"ps": ["tj-param-0.tj:3333"], "worker": ["tj-trainer-0.tj:3333", "tj-trainer-1.tj:3333"], "chief": ["tj-boss-0.tj:3333"], "evaluator": ["tj-judge-0.tj:3333"]}, "chief", 0)}},
    ),
    PodCase(
        "tf-task-of-no-role",
        {"tensorflow": []},
        harness.job(task("worker", replicas=2), task("extra")),
        "extra",
        {"env:main": {"TF_CONFIG": tf_config({"worker": ["tj-worker-0.tj:2222", "tj-worker-1.tj:2222"]}, "extra", 0)}},
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    ObjectsCase("tensorflow-owns-nothing", {"tensorflow": []}, MASTER_WORKERS, {}),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)


FLAG_CASES = [
    FlagsCase("tf-defaults", tensorflow.Tensorflow, (), {"ps": "ps", "worker": "worker", "chief": "chief", "evaluator": "evaluator", "port": 2222}),
    FlagsCase("tf-custom", tensorflow.Tensorflow, ("--ps=param", "--worker=trainer", "--port=3333"), {"ps": "param", "worker": "trainer", "chief": "chief", "port": 3333}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    plugin_harness.check_flags(case)
