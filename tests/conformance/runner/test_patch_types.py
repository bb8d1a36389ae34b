"""A `patch` step's `type` on a real API server (runner.steps.run_step): `json` sends a JSON Patch,
which can change one element of a list that a merge patch could only replace whole, and whose
`test` operation the API server refuses when it does not hold; without a type, a Volcano kind
takes a merge patch. No implementation runs in the cluster: the Jobs are only stored."""

from __future__ import annotations

import os
from typing import Any, Iterator

import pytest

from conformance.cluster import resources
from conformance.runner import steps
from conformance.scenario import models
from tests.clusters import OwnCluster
from tests.conformance.runner import step_contexts

pytestmark = pytest.mark.cluster

JOB = resources.lookup("Job", "batch.volcano.sh/v1alpha1")


@pytest.fixture
def step_context(own_cluster: OwnCluster) -> Iterator[steps.StepContext]:
    with step_contexts.reference_crds_context(own_cluster, [JOB], 0.1) as ctx:
        yield ctx


def two_task_job(name: str) -> dict[str, Any]:
    def task(task_name: str) -> dict[str, Any]:
        return {"name": task_name, "replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}

    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name}, "spec": {"minAvailable": 1, "tasks": [task("a"), task("b")]}}


def patch_step(name: str, body: Any, patch_type: str | None = None, refusal: str | None = None) -> models.Step:
    spec: dict[str, Any] = {"object": {"kind": "Job", "name": name}, "patch": body}
    if patch_type:
        spec["type"] = patch_type
    return models.Step("patch", spec, expect_rejection=refusal)


def test_a_json_patch_changes_one_task_and_keeps_the_others(step_context: steps.StepContext) -> None:
    name = f"jp-{os.getpid()}"
    step_context.client.create(JOB, two_task_job(name), "default")
    try:
        assert steps.run(step_context, patch_step(name, [{"op": "replace", "path": "/spec/tasks/1/replicas", "value": 3}], "json")) is None
        stored = step_context.client.get(JOB, name, "default")["spec"]["tasks"]
        assert [(t["name"], t["replicas"]) for t in stored] == [("a", 1), ("b", 3)]
        # The same change as a merge patch replaces the list: what `type: json` is for.
        steps.run(step_context, patch_step(name, {"spec": {"tasks": [{"name": "b", "replicas": 4, "template": stored[1]["template"]}]}}))
        assert [t["name"] for t in step_context.client.get(JOB, name, "default")["spec"]["tasks"]] == ["b"]
        # A `test` operation that does not hold: the API server refuses the whole patch (in its
        # generic words: "the server rejected our request due to an error in our request").
        refused = steps.run(step_context, patch_step(name, [{"op": "test", "path": "/spec/minAvailable", "value": 9}, {"op": "replace", "path": "/spec/minAvailable", "value": 2}], "json", refusal="rejected our request"))
        assert refused is not None and refused.passed, refused
        assert step_context.client.get(JOB, name, "default")["spec"]["minAvailable"] == 1
        with pytest.raises(steps.StepFailed):
            steps.run(step_context, patch_step(name, [{"op": "test", "path": "/spec/minAvailable", "value": 9}], "json"))
    finally:
        step_context.client.delete(JOB, name, "default")
