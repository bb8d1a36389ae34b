"""The adapters' wait for the default queue (conformance/impl/queues.py) on a real API server: it
returns as soon as the queues are Open, and when they never are it says which and how they stand
instead of deciding the run (the scenarios judge an implementation that never opens its queues).

The tests use a cluster of their own: the worker's session cluster may be running the reference
implementation (tests that run scenarios in-process start it), whose queue controller would open
the queue that "nobody opens"."""

from __future__ import annotations

import logging
import os
from typing import Iterator

import kubernetes
import pytest

from conformance.impl import crds, queues, reference
from tests.clusters import OwnCluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def bare_api(own_cluster: OwnCluster) -> kubernetes.client.ApiClient:
    """A cluster with Volcano's CRDs and no implementation: nothing opens a queue."""
    crds.install(own_cluster.api, sorted((reference.package_dir() / "crds").glob("*.yaml")), "the reference")
    return own_cluster.api


@pytest.fixture
def queue_name(bare_api: kubernetes.client.ApiClient) -> Iterator[str]:
    name = f"wait-{os.getpid()}"
    custom = kubernetes.client.CustomObjectsApi(bare_api)
    custom.create_cluster_custom_object(*queues.QUEUES, {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": {"weight": 1}})
    yield name
    custom.delete_cluster_custom_object(*queues.QUEUES, name)


def test_a_queue_nobody_opens_is_reported_not_raised(bare_api: kubernetes.client.ApiClient, queue_name: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=queues.__name__):
        left = queues.wait_open(bare_api, [queue_name, "never-created"], timeout_s=2)
    assert left == {queue_name: "no state", "never-created": "absent"}
    assert "were not Open within 2s" in caplog.text and "is the queue controller running?" in caplog.text


def test_an_open_queue_ends_the_wait(bare_api: kubernetes.client.ApiClient, queue_name: str) -> None:
    custom = kubernetes.client.CustomObjectsApi(bare_api)
    custom.patch_cluster_custom_object_status(*queues.QUEUES, queue_name, {"status": {"state": "Open"}})
    assert queues.wait_open(bare_api, [queue_name], timeout_s=60) == {}
