"""A pod's quota usage (controllers/quota.py) in memory: every resource in every quota form a
ResourceQuota counts, init containers, hugepages and extended resources too; a finished pod only
as an object.

Upstream: pkg/controllers/util/util.go (GetPodQuotaUsage)."""

from __future__ import annotations

from reference_scheduler.controllers import quota


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
