"""The reference Job webhook refuses a task template with a negative request or limit, in the words
of Kubernetes' pod template validation (which Volcano's admit_job.go runs on every task)."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.webhooks import validate_job


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
    ],
    ids=["negative-cpu", "negative-memory-limit", "negative-init-scalar", "zero", "none"],
)
def test_negative_quantities_are_refused(resources: dict[str, Any], field: str, refusal: str | None) -> None:
    found = validate_job.negative_resource_errors(task(resources, field), 2)
    assert (found.strip() if found else None) == refusal
