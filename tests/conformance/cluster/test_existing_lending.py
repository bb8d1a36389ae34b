"""An existing cluster lends its own nodes to the scenarios that run real containers only when the
user says how many (`--lend-nodes`), and only nodes a scenario's pods can run on as written: Ready,
schedulable, untainted, not a control plane, not the kit's. Judged on a real API server (an
embedded cluster reached by its kubeconfig, whose Node objects stand for the cluster's nodes)."""

from __future__ import annotations

import contextlib
import pathlib
import subprocess
from typing import Any, Iterator

import kubernetes
import pytest
import yaml

from conformance.api import clusters
from conformance.cluster import base, existing, kube, nodes, owners, processes
from tests.clusters import OwnCluster

pytestmark = pytest.mark.cluster

READY = [{"type": "Ready", "status": "True"}]


def node(name: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None, ready: bool = True, **spec: Any) -> kubernetes.client.V1Node:
    return kubernetes.client.V1Node(
        metadata=kubernetes.client.V1ObjectMeta(name=name, labels=labels, annotations=annotations), spec=kubernetes.client.V1NodeSpec(**spec),
        status=kubernetes.client.V1NodeStatus(conditions=[kubernetes.client.V1NodeCondition(type="Ready", status="True" if ready else "False")]),
    )


def test_only_nodes_a_pod_runs_on_as_written_are_lendable() -> None:
    found = [
        node("b"), node("a"),
        node("tainted", taints=[kubernetes.client.V1Taint(key="dedicated", value="gpu", effect="NoSchedule")]),
        node("evicting", taints=[kubernetes.client.V1Taint(key="maintenance", effect="NoExecute")]),
        node("preferring", taints=[kubernetes.client.V1Taint(key="soft", effect="PreferNoSchedule")]),
        node("cordoned", unschedulable=True),
        node("control-plane", labels={"node-role.kubernetes.io/control-plane": ""}),
        node("not-ready", ready=False),
        node("kits", annotations={nodes.KWOK_NODE_ANNOTATION: "fake"}),
        node("windows", labels={"kubernetes.io/os": "windows"}),
    ]
    # A PreferNoSchedule taint keeps no pod away.
    assert existing.lendable_nodes(found) == ["a", "b", "preferring"]


@pytest.fixture
def cluster_nodes(own_cluster: OwnCluster) -> Iterator[kubernetes.client.CoreV1Api]:
    """Two nodes a pod runs on and one tainted away, standing for the cluster's own. (The embedded
    cluster's kwok makes every node Ready; the kit's are told apart by their annotation.)"""
    core = kubernetes.client.CoreV1Api(own_cluster.api)
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "lend-b"}})
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "lend-a"}})
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "lend-tainted"}, "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}})
    try:
        kube.watch_until(core.list_node, lambda _: existing.lendable_nodes(core.list_node().items) == ["lend-a", "lend-b"], 60.0, "the cluster's nodes to be Ready")
        yield core
    finally:
        for name in ("lend-a", "lend-b", "lend-tainted"):
            core.delete_node(name)


def test_the_backend_lends_what_it_is_told_and_takes_the_label_back(tmp_path: pathlib.Path, own_cluster: OwnCluster, cluster_nodes: kubernetes.client.CoreV1Api) -> None:
    def backend(lend: int) -> existing.ExistingBackend:
        return existing.ExistingBackend(own_cluster.handle.kubeconfig, own_cluster.handle.context, host_address="127.0.0.1", state_root=tmp_path, progress=lambda _: None, lend_nodes=lend)

    untouched = backend(0).up("lend-none", ())
    try:
        assert untouched.real_nodes == () and untouched.node_selector == (nodes.KIT_NODE_SELECTOR,)
    finally:
        backend(0).down("lend-none")
    with pytest.raises(base.ClusterError, match=r"--lend-nodes 3, but the cluster has 2 node\(s\) that can run a scenario's containers .*: lend-a, lend-b"):
        backend(3).up("lend-three", ())
    # `vck run` refuses it before anything starts, in one line.
    (refused,) = backend(3).preflight()
    assert "--lend-nodes 3, but the cluster has 2 node(s)" in refused and backend(2).preflight() == []
    assert not (tmp_path / "lend-three").exists(), "a refused up starts nothing"
    handle = backend(1).up("lend-one", ())
    key, value = nodes.LENT_NODE_LABEL
    try:
        assert handle.real_nodes == ("lend-a",)
        # The scheduler under test selects the lent nodes beside the kit's own.
        assert handle.node_selector == (nodes.KIT_NODE_SELECTOR, nodes.LENT_NODE_SELECTOR)
        # As a scenario's lending leaves it (or a killed run): `down` takes the label off.
        cluster_nodes.patch_node("lend-a", {"metadata": {"labels": {key: value}}})
    finally:
        backend(1).down("lend-one")
    assert key not in (cluster_nodes.read_node("lend-a").metadata.labels or {})


@contextlib.contextmanager
def dead_run() -> Iterator[owners.Owner]:
    """The owner a run killed with -9 leaves: a process that ran, and is gone once the block's
    body has used it (killed inside the block by `kill`)."""
    run = subprocess.Popen(["sleep", "600"])
    try:
        owner = owners.of_process(run.pid, "vck run")
        assert owner is not None
        yield owner
    finally:
        run.kill()
        run.wait()


def kit_node_names(core: kubernetes.client.CoreV1Api) -> list[str]:
    return [n.metadata.name for n in core.list_node().items if (n.metadata.annotations or {}).get(nodes.KWOK_NODE_ANNOTATION) == "fake"]


def left_by(owner: owners.Owner, kubeconfig: pathlib.Path, root: pathlib.Path, name: str, groups: str = "") -> existing.ExistingBackend:
    backend = existing.ExistingBackend(kubeconfig, None, host_address="127.0.0.1", state_root=root / "existing", progress=lambda _: None, lend_nodes=1, owner=owner)
    backend.up(name, nodes.parse(groups) if groups else ())
    return backend


def test_what_a_killed_run_left_on_an_existing_cluster_is_listed_and_pruned(tmp_path: pathlib.Path, own_cluster: OwnCluster, cluster_nodes: kubernetes.client.CoreV1Api) -> None:
    """A run killed with -9 cannot call `down`: its kwok controller keeps running here, its nodes
    and the lent label stay in the user's cluster. `vck cluster list` shows them with the owner
    gone, and `vck cluster prune` takes them back, from the kubeconfig the run recorded."""
    key, value = nodes.LENT_NODE_LABEL
    with dead_run() as owner:
        backend = left_by(owner, own_cluster.handle.kubeconfig, tmp_path, "left-behind", "1")
    state = backend.state_dir("left-behind")
    try:
        cluster_nodes.patch_node("lend-a", {"metadata": {"labels": {key: value}}})  # a scenario's lending
        [info] = [i for i in clusters.list_clusters(tmp_path) if i.backend == "existing"]
        assert (info.name, info.owner_alive) == ("left-behind", False) and info.processes >= 1, info
        assert processes.under(state), "the kwok controller the run started still runs"
        assert clusters.prune_clusters(clusters.PruneConfig(state_root=tmp_path), progress=lambda _: None) == ["left-behind"]
        assert not processes.under(state) and not state.exists()
        assert not kit_node_names(cluster_nodes)
        assert key not in (cluster_nodes.read_node("lend-a").metadata.labels or {})
        assert not [i for i in clusters.list_clusters(tmp_path) if i.backend == "existing"]
    finally:
        if state.exists():
            backend.down("left-behind")


def test_prune_keeps_what_it_cannot_take_back_as_it_was_left_and_says_why(tmp_path: pathlib.Path, own_cluster: OwnCluster, cluster_nodes: kubernetes.client.CoreV1Api) -> None:
    """The record names the cluster by its context and its API server: when the kubeconfig's
    context now names another server, or a live run uses the same cluster (its nodes would go
    too), prune keeps the record and says why; once that has passed, it takes it back."""
    kubeconfig = tmp_path / "kubeconfig.yaml"
    original = own_cluster.handle.kubeconfig.read_text()
    kubeconfig.write_text(original)
    said: list[str] = []
    with dead_run() as owner:
        backend = left_by(owner, kubeconfig, tmp_path, "moved")
    live = left_by(owners.current(), kubeconfig, tmp_path, "live")
    try:
        assert clusters.prune_clusters(clusters.PruneConfig(state_root=tmp_path), progress=said.append) == []
        assert "a live run (pid " in said[-1] and "prune again after it ends" in said[-1], said
        live.down("live")
        server = yaml.safe_load(original)["clusters"][0]["cluster"]["server"]
        kubeconfig.write_text(original.replace(server, "https://127.0.0.1:1"))
        assert clusters.prune_clusters(clusters.PruneConfig(state_root=tmp_path), progress=said.append) == []
        assert f"now names https://127.0.0.1:1, not {server}" in said[-1], said
        assert backend.state_dir("moved").exists() and processes.under(backend.state_dir("moved"))
        kubeconfig.write_text(original)
        assert clusters.prune_clusters(clusters.PruneConfig(state_root=tmp_path), progress=said.append) == ["moved"]
        assert not backend.state_dir("moved").exists() and not processes.under(backend.state_dir("moved"))
    finally:
        kubeconfig.write_text(original)
        for name, left in (("moved", backend), ("live", live)):
            if left.state_dir(name).exists():
                left.down(name)
