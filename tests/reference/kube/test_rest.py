"""The lean REST path (kube/rest.py) on a real API server: it sends a request again on a fresh
connection when the server closed the kept-alive one, reports the server's errors, gives up on a
call the server never answers (frozen with SIGSTOP, api_server.py), and feeds a watch-fed store."""

from __future__ import annotations

import concurrent.futures
import json
import socket
import threading
import time

import pytest

from reference_scheduler.kube import informer, kubeconfig, rest
from tests.clusters import OwnCluster
from tests.reference.kube.api_server import GIVE_UP_WITHIN_S, frozen_api_server

pytestmark = pytest.mark.cluster


def lean(cluster: OwnCluster, timeout_s: tuple[float, float] = rest.REQUEST_TIMEOUT_S) -> rest.Rest:
    target = kubeconfig.load(str(cluster.handle.kubeconfig))
    assert target is not None
    return rest.Rest(target, "vck-test", timeout_s)


def test_a_request_on_a_connection_the_server_closed_is_sent_again(own_cluster: OwnCluster) -> None:
    path = rest.path("", "v1", "namespaces", None, "default")
    api = lean(own_cluster)
    assert json.loads(api.request("GET", path))["metadata"]["name"] == "default"
    kept = api._local.conn
    # As the API server does to a connection idle too long: closed under the client's feet.
    kept.sock.shutdown(socket.SHUT_RDWR)
    assert json.loads(api.request("GET", path))["metadata"]["name"] == "default"
    assert api._local.conn is not kept


def test_the_servers_refusal_is_reported_with_its_words(own_cluster: OwnCluster) -> None:
    with pytest.raises(rest.ApiError) as refused:
        lean(own_cluster).request("GET", rest.path("", "v1", "namespaces", None, "no-such-namespace"))
    assert refused.value.status == 404 and "no-such-namespace" in refused.value.reason


def test_a_lean_call_the_server_never_answers_gives_up(own_cluster: OwnCluster) -> None:
    api = lean(own_cluster, (2.0, 2.0))
    path = rest.path("", "v1", "namespaces")
    api.request("GET", path)
    with concurrent.futures.ThreadPoolExecutor(1) as pool, frozen_api_server(own_cluster):
        call = pool.submit(api.request, "GET", path)
        with pytest.raises(OSError):
            call.result(timeout=GIVE_UP_WITHIN_S)


def test_a_store_fed_through_the_lean_path_follows_the_cluster(own_cluster: OwnCluster) -> None:
    api = lean(own_cluster)
    changed = threading.Event()
    store = informer.Store("configmaps", informer.RestSource(api, rest.path("", "v1", "configmaps")), changed)
    store.start()
    try:
        assert store.synced.wait(30)
        api.post(rest.path("", "v1", "configmaps", "default"), {"metadata": {"name": "lean-watched"}, "data": {"k": "v"}})
        deadline = time.monotonic() + 30
        while store.get("default", "lean-watched") is None and time.monotonic() < deadline:
            changed.wait(1)
            changed.clear()
        assert (store.get("default", "lean-watched") or {}).get("data") == {"k": "v"}
    finally:
        store.stop()
        api.request("DELETE", rest.path("", "v1", "configmaps", "default", "lean-watched"))
