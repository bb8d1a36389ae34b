"""Resource vectors (reference_scheduler/api/resource.py): the quota forms a minResources may carry
(requests.*, limits.*, count/*, pods) are no resource."""

from __future__ import annotations

from reference_scheduler.api import resource


def test_quota_forms_in_min_resources_are_no_resource() -> None:
    parsed = resource.Resource.from_list({"cpu": "2", "requests.cpu": "2", "limits.cpu": "2", "count/pods": "2", "pods": "2", "nvidia.com/gpu": "1", "requests.nvidia.com/gpu": "1"})
    assert parsed.values == {"cpu": 2000.0, "nvidia.com/gpu": 1.0}
