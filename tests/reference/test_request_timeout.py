"""The reference's API clients, the official one and the lean REST path (kube/rest.py), give up on
a call the API server never answers (so a scheduling cycle or a reconcile loop cannot hang on
one), and never bound a watch that way. On a real API server, frozen with SIGSTOP: its
connections stay open and nothing answers, as with a partition. The lean path also reads the
kubeconfig as the official reader does, sends a request again on a fresh connection when the
server closed the kept-alive one, reports the server's errors, and feeds a watch-fed store."""

from __future__ import annotations

import base64
import concurrent.futures
import contextlib
import json
import os
import pathlib
import signal
import socket
import threading
import time
from typing import Iterator

import kubernetes
import pytest
import urllib3
import yaml

from conformance.cluster import processes
from reference_scheduler.kube import client, informer, kubeconfig, rest
from tests.clusters import OwnCluster

pytestmark = pytest.mark.cluster
GIVE_UP_WITHIN_S = 60


@contextlib.contextmanager
def frozen_api_server(cluster: OwnCluster) -> Iterator[None]:
    [server] = [p for p in processes.under(cluster.state_dir) if p.name == "kube-apiserver"]
    os.kill(server.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.pid, signal.SIGCONT)


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


def lean(cluster: OwnCluster, timeout_s: tuple[float, float] = rest.REQUEST_TIMEOUT_S) -> rest.Rest:
    target = kubeconfig.load(str(cluster.handle.kubeconfig))
    assert target is not None
    return rest.Rest(target, "vck-test", timeout_s)


def test_the_lean_reader_finds_what_the_official_one_does(own_cluster: OwnCluster, tmp_path: pathlib.Path) -> None:
    official = kubeconfig.from_configuration(client.api_client(str(own_cluster.handle.kubeconfig)).configuration)
    lean_target = kubeconfig.load(str(own_cluster.handle.kubeconfig))
    assert lean_target is not None and (lean_target.server, lean_target.ca_file) == (official.server, official.ca_file)
    # The same credentials given inline (as most kubeconfigs carry them) reach the server too.
    doc = yaml.safe_load(own_cluster.handle.kubeconfig.read_text())
    cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
    cluster["certificate-authority-data"] = base64.b64encode(pathlib.Path(cluster.pop("certificate-authority")).read_bytes()).decode()
    for key in ("client-certificate", "client-key"):
        user[f"{key}-data"] = base64.b64encode(pathlib.Path(user.pop(key)).read_bytes()).decode()
    inline = tmp_path / "inline.yaml"
    inline.write_text(yaml.safe_dump(doc))
    target = kubeconfig.load(str(inline))
    assert target is not None and target.server == official.server
    assert json.loads(rest.Rest(target, "vck-test", rest.REQUEST_TIMEOUT_S).request("GET", "/api/v1/namespaces/default"))["metadata"]["name"] == "default"
    # What only the official reader handles is left to it.
    user["exec"] = {"command": "true", "apiVersion": "client.authentication.k8s.io/v1"}
    inline.write_text(yaml.safe_dump(doc))
    assert kubeconfig.load(str(inline)) is None


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
