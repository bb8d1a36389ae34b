"""The reference's official API client (kube/client.py) gives up on a call the API server never
answers (so a scheduling cycle or a reconcile loop cannot hang on one), and never bounds a watch
that way. On a real API server, frozen with SIGSTOP (api_server.py)."""

from __future__ import annotations

import concurrent.futures
import time

import kubernetes
import pytest
import urllib3

from reference_scheduler.kube import client
from tests.clusters import OwnCluster
from tests.reference.kube.api_server import GIVE_UP_WITHIN_S, frozen_api_server

pytestmark = pytest.mark.cluster


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> tuple[float, float]:
    bound = (2.0, 2.0)
    monkeypatch.setattr(client, "REQUEST_TIMEOUT_S", bound)
    return bound


def test_a_call_the_server_never_answers_gives_up(own_cluster: OwnCluster, short_timeout: tuple[float, float]) -> None:
    core = kubernetes.client.CoreV1Api(client.api_client(str(own_cluster.handle.kubeconfig)))
    core.list_namespace()  # the connection is open and the server answers
    with concurrent.futures.ThreadPoolExecutor(1) as pool, frozen_api_server(own_cluster):
        call = pool.submit(core.list_namespace)
        # The unbounded client would wait for as long as the server stays frozen; the bound one
        # gives up after its read timeout (urllib3 retries a few times, each bounded the same way).
        # Thawing the server on the way out lets an unbounded call finish, so this never hangs.
        with pytest.raises(urllib3.exceptions.HTTPError):
            call.result(timeout=GIVE_UP_WITHIN_S)
    assert core.list_namespace().items, "the thawed server answers again on the same client"


def test_a_watch_is_not_cut_by_the_call_timeout(own_cluster: OwnCluster, short_timeout: tuple[float, float]) -> None:
    core = kubernetes.client.CoreV1Api(client.api_client(str(own_cluster.handle.kubeconfig)))
    listed = core.list_namespace()
    # Nothing changes namespaces here: the watch is quiet for longer than the read timeout and
    # must end by the server's timeoutSeconds, not by a client-side read timeout.
    quiet_s = int(short_timeout[1]) + 3
    started = time.monotonic()
    events = list(kubernetes.watch.Watch().stream(core.list_namespace, resource_version=listed.metadata.resource_version, timeout_seconds=quiet_s))
    assert events == []
    assert time.monotonic() - started >= quiet_s - 0.5


def test_only_watch_requests_are_recognised_as_watches() -> None:
    assert client.is_watch("https://h/api/v1/pods?watch=true&timeoutSeconds=5")
    assert not client.is_watch("https://h/api/v1/pods?labelSelector=watch%3Dtrue")
    assert not client.is_watch("https://h/api/v1/namespaces/watch/pods")
