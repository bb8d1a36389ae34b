"""The bench's stage: a fresh embedded cluster of kwok nodes with the API server's audit log on,
its nodes created through the lean client (5,000 nodes in seconds rather than a minute), and a
namespace for the workload.

Each measure gets a cluster of its own, started and removed around it, so the ceiling and every
implementation meet the same empty cluster of the same shape.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import pathlib
import secrets
import time
from typing import Any, Callable, Iterator

from conformance.bench import audit, wire
from conformance.cluster import base, embedded, kube, nodes, owners

Progress = Callable[[str], None]
NODE_PREFIX = "bench"
NODE_MEMORY = "256Gi"
NODE_PODS = 110
# A node is Ready once kwok's controller picked it up; thousands take a few seconds each hundred.
NODES_READY_S_PER_1000 = 60.0
POLL_S = 2.0


class StageError(RuntimeError):
    """The bench's cluster could not be set up (it is removed again)."""


@dataclasses.dataclass(frozen=True)
class Stage:
    handle: base.ClusterHandle
    endpoint: wire.Endpoint
    namespace: str
    node_names: tuple[str, ...]
    audit_log: pathlib.Path

    @property
    def state_dir(self) -> pathlib.Path:
        assert self.handle.state_dir is not None  # embedded clusters always have one
        return self.handle.state_dir


def _list_nodes(endpoint: wire.Endpoint, names: frozenset[str]) -> list[dict[str, Any]]:
    conn = endpoint.connect()
    try:
        conn.request("GET", "/api/v1/nodes", headers=dict(endpoint.headers))
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    if resp.status != 200:
        raise StageError(f"listing nodes: HTTP {resp.status} {data[:300]!r}")
    return [n for n in json.loads(data)["items"] if n["metadata"]["name"] in names]


def _condition_ready(node: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (node.get("status") or {}).get("conditions") or [])


def _untaint(endpoint: wire.Endpoint, ready: list[dict[str, Any]]) -> None:
    """Take the not-ready taint (put on every new node at its creation) off nodes kwok already
    reports Ready, as kube-controller-manager's node lifecycle controller would: it does so at its
    client's rate limit, about five nodes a second, which kept a thousand nodes waiting minutes.
    The bench's nodes have no taint of their own."""
    tainted = [n["metadata"]["name"] for n in ready if any(t.get("key") in kube.CONDITION_TAINTS for t in (n.get("spec") or {}).get("taints") or [])]
    patch = json.dumps({"spec": {"taints": None}}).encode()
    requests = [wire.Request("PATCH", f"/api/v1/nodes/{name}", patch) for name in tainted]
    failed = wire.failures(wire.send_all(endpoint, requests, headers={"Content-Type": "application/merge-patch+json"}))
    if failed:
        raise StageError(f"untainting {len(failed)} Ready nodes failed; first: HTTP {failed[0].status} {failed[0].error}")


def _create_nodes(endpoint: wire.Endpoint, count: int, cpu: str, progress: Progress) -> tuple[str, ...]:
    group = nodes.NodeGroup(count=count, cpu=cpu, memory=NODE_MEMORY, pods=NODE_PODS, prefix=NODE_PREFIX)
    manifests = nodes.kwok_nodes([group])
    requests = [wire.Request("POST", "/api/v1/nodes", json.dumps(m).encode()) for m in manifests]
    failed = wire.failures(wire.send_all(endpoint, requests))
    if failed:
        raise StageError(f"creating {len(failed)} of {count} nodes failed; first: HTTP {failed[0].status} {failed[0].error}")
    names = frozenset(m["metadata"]["name"] for m in manifests)
    deadline = time.monotonic() + max(60.0, NODES_READY_S_PER_1000 * count / 1000)
    while True:
        listed = _list_nodes(endpoint, names)
        ready = sum(1 for n in listed if kube.node_ready(n))
        if ready == count:
            return tuple(sorted(names))
        if time.monotonic() > deadline:
            raise StageError(f"only {ready} of {count} nodes were Ready in time")
        _untaint(endpoint, [n for n in listed if _condition_ready(n)])
        progress(f"bench: {ready} of {count} nodes Ready")
        time.sleep(POLL_S)  # polling a list: a watch of thousands of nodes would cost the bench more


@contextlib.contextmanager
def cluster(name: str, node_count: int, node_cpu: str, progress: Progress) -> Iterator[Stage]:
    """A fresh cluster for one measure, removed afterwards however the measure ends."""
    backend = embedded.EmbeddedBackend(owner=owners.current(), progress=progress, audit_policy=audit.POLICY)
    if backend.state_dir(name).exists():
        raise StageError(f"a cluster named {name} already exists: the bench needs a fresh one; remove it with `vck cluster down --name {name}` or choose another --name")
    handle = backend.up(name, [])
    try:
        endpoint = wire.Endpoint.from_kubeconfig(handle.kubeconfig)
        started = time.monotonic()
        names = _create_nodes(endpoint, node_count, node_cpu, progress)
        progress(f"bench: {node_count} nodes Ready in {time.monotonic() - started:.1f}s")
        namespace = f"vck-bench-{secrets.token_hex(3)}"
        answer = wire.send_all(endpoint, [wire.Request("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": namespace}}).encode())], workers=1)
        if wire.failures(answer):
            raise StageError(f"creating namespace {namespace}: HTTP {answer[0].status} {answer[0].error}")
        kube.wait_service_account(kube.client(handle.kubeconfig), namespace, 60)
        yield Stage(handle, endpoint, namespace, names, backend.audit_log(name))
    finally:
        backend.down(name)
