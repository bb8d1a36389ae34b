"""An existing cluster lends its own nodes to the scenarios that run real containers only when the
user says how many (`--lend-nodes`), and only nodes a scenario's pods can run on as written: Ready,
schedulable, untainted, not a control plane, not the kit's. Judged on a real API server (an
embedded cluster reached by its kubeconfig, whose Node objects stand for the cluster's nodes)."""

from __future__ import annotations

import pathlib
import subprocess
from typing import Any, Iterator

import kubernetes
import pytest

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


def test_what_a_killed_run_left_on_an_existing_cluster_is_listed_and_pruned(tmp_path: pathlib.Path, own_cluster: OwnCluster, cluster_nodes: kubernetes.client.CoreV1Api) -> None:
    """A run killed with -9 cannot call `down`: its kwok controller keeps running here, its nodes
    and the lent label stay in the user's cluster. `vck cluster list` shows them with the owner
    gone, and `vck cluster prune` takes them back, from the kubeconfig the run recorded."""
    run = subprocess.Popen(["sleep", "600"])
    owner = owners.of_process(run.pid, "vck run")
    assert owner is not None
    backend = existing.ExistingBackend(
        own_cluster.handle.kubeconfig, own_cluster.handle.context, host_address="127.0.0.1", state_root=tmp_path / "existing", progress=lambda _: None, lend_nodes=1, owner=owner,
    )
    backend.up("left-behind", nodes.parse("1"))
    key, value = nodes.LENT_NODE_LABEL
    cluster_nodes.patch_node("lend-a", {"metadata": {"labels": {key: value}}})  # a scenario's lending
    run.kill()
    run.wait()
    [info] = [i for i in clusters.list_clusters(tmp_path) if i.backend == "existing"]
    assert (info.name, info.owner_alive) == ("left-behind", False) and info.processes >= 1, info
    state = backend.state_dir("left-behind")
    assert processes.under(state), "the kwok controller the run started still runs"
    assert clusters.prune_clusters(clusters.PruneConfig(state_root=tmp_path), progress=lambda _: None) == ["left-behind"]
    assert not processes.under(state) and not state.exists()
    assert not [n for n in cluster_nodes.list_node().items if (n.metadata.annotations or {}).get(nodes.KWOK_NODE_ANNOTATION) == "fake"]
    assert key not in (cluster_nodes.read_node("lend-a").metadata.labels or {})
    assert not [i for i in clusters.list_clusters(tmp_path) if i.backend == "existing"]
