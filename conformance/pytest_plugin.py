"""The kit's pytest plugin (registered through the `pytest11` entry point).

Fixtures later suites build on: `vck_cluster` (one cluster per session, and so one per pytest-xdist
worker), `vck_api` (an official-client ApiClient for it) and `vck_namespace` (a fresh namespace per
test, deleted afterwards).
"""

from __future__ import annotations

import os
import re
import secrets
from typing import Iterator

import kubernetes
import pytest

from conformance.cluster import base, kube, nodes, registry

NAMESPACE_READY_TIMEOUT_S = 60.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vck", "Volcano conformance kit")
    group.addoption("--vck-backend", choices=registry.BACKENDS, default="embedded", help="cluster backend (default: embedded)")
    group.addoption("--vck-kubeconfig", default=None, help="existing backend: kubeconfig path")
    group.addoption("--vck-context", default=None, help="existing backend: kubeconfig context")
    group.addoption("--vck-nodes", default=None, help=f"node spec for the session cluster (default: {nodes.DEFAULT_SPEC} nodes)")
    group.addoption("--vck-cluster-name", default=None, help="cluster name (default: one per session and xdist worker)")


def _worker_id(config: pytest.Config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else "main"


@pytest.fixture(scope="session")
def vck_cluster(request: pytest.FixtureRequest) -> Iterator[base.ClusterHandle]:
    """A running cluster for the whole session; an embedded one per xdist worker, stopped at the end."""
    config = request.config
    name = config.getoption("--vck-cluster-name") or f"vck-pytest-{_worker_id(config)}-{os.getpid()}"
    backend = registry.backend(
        config.getoption("--vck-backend"),
        kubeconfig=config.getoption("--vck-kubeconfig"),
        context=config.getoption("--vck-context"),
    )
    handle = backend.up(name, nodes.parse(config.getoption("--vck-nodes")))
    try:
        yield handle
    finally:
        if handle.owned and not handle.reused:
            backend.down(name)


@pytest.fixture(scope="session")
def vck_api(vck_cluster: base.ClusterHandle) -> kubernetes.client.ApiClient:
    return kube.client(vck_cluster.kubeconfig, vck_cluster.context)


@pytest.fixture
def vck_namespace(request: pytest.FixtureRequest, vck_api: kubernetes.client.ApiClient) -> Iterator[str]:
    """A namespace of its own for one test, ready for pods (its default ServiceAccount exists)."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].rstrip("-")
    name = f"{stem}-{secrets.token_hex(3)}"
    core = kubernetes.client.CoreV1Api(vck_api)
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"conformance.vck.io/test": "true"}}})
    try:
        kube.wait_service_account(vck_api, name, NAMESPACE_READY_TIMEOUT_S)
        yield name
    finally:
        try:
            core.delete_namespace(name)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
