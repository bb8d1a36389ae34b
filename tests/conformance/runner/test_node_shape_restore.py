"""A kit error never changes another scenario's verdict: when making a scenario's nodes fails
half-way (the API refuses one), the next scenario still gets exactly the nodes it declares, even
when they are the shape the cluster had before the failure; and an API server that answers "not
now" for a moment (an etcd stall, load shedding) while the kit prepares a scenario costs it a few
seconds, not the scenario."""

from __future__ import annotations

import contextlib
import dataclasses
import pathlib
from typing import Iterator

import kubernetes
import pytest

from conformance.cluster import base, kube, nodes
from conformance.impl import reference
from conformance.runner import context
from tests import faulty_api
from tests.clusters import OwnCluster

pytestmark = pytest.mark.cluster

SHAPE = (nodes.NodeGroup(count=2, cpu="8", memory="16Gi"),)
# The API refuses this label value (spaces are not allowed), after the old nodes were removed.
REFUSED = (nodes.NodeGroup(count=2, cpu="8", memory="16Gi", labels=(("vck.example/zone", "not a valid value"),)),)


def node_names(api: kubernetes.client.ApiClient) -> list[str]:
    return sorted(n.metadata.name for n in kubernetes.client.CoreV1Api(api).list_node().items if n.metadata.name.startswith(nodes.DEFAULT_PREFIX))


def test_a_failed_reshape_is_repaired_before_the_next_scenario(own_cluster: OwnCluster) -> None:
    ctx = context.RunContext(own_cluster.handle, reference.Reference())
    ctx.prepare_nodes(SHAPE)
    assert node_names(own_cluster.api) == ["vck-node-0", "vck-node-1"]
    with pytest.raises(base.ClusterError, match="creating node"):
        ctx.prepare_nodes(REFUSED)
    # The failed attempt removed the old nodes; the next scenario asks for the old shape again.
    ctx.prepare_nodes(SHAPE)
    assert node_names(own_cluster.api) == ["vck-node-0", "vck-node-1"]
    ready = {n.metadata.name for n in kubernetes.client.CoreV1Api(own_cluster.api).list_node().items if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])}
    assert {"vck-node-0", "vck-node-1"} <= ready


def kit_nodes(api: kubernetes.client.ApiClient) -> dict[str, bool]:
    """Every kwok node the kit made, and whether it is Ready."""
    return {
        n.metadata.name: any(c.type == "Ready" and c.status == "True" for c in n.status.conditions or [])
        for n in kubernetes.client.CoreV1Api(api).list_node().items
        if (n.metadata.annotations or {}).get(nodes.KWOK_NODE_ANNOTATION) == "fake"
    }


def test_a_node_added_mid_scenario_is_ready_and_gone_for_the_next_one(own_cluster: OwnCluster) -> None:
    ctx = context.RunContext(own_cluster.handle, reference.Reference())
    ctx.prepare_nodes(SHAPE)
    ctx.add_node(nodes.kwok_node("added-late", nodes.NodeGroup(cpu="2", memory="4Gi", labels=(("rack", "late"),))))
    assert kit_nodes(own_cluster.api) == {"vck-node-0": True, "vck-node-1": True, "added-late": True}
    # The same shape again: the node the scenario added does not stay for the next one.
    ctx.prepare_nodes(SHAPE)
    assert kit_nodes(own_cluster.api) == {"vck-node-0": True, "vck-node-1": True}
    # A scenario with `nodes: []` starts with no node at all.
    ctx.prepare_nodes(())
    assert kit_nodes(own_cluster.api) == {}


def test_a_real_node_is_lent_to_the_scenario_that_asks_and_taken_back_after(own_cluster: OwnCluster) -> None:
    """A node the kit did not make (kind's real worker; here a Node object no kwok manages) carries
    the lent label, which the scheduler under test selects, only while a scenario with
    `real_nodes` runs; the simulated nodes are gone meanwhile, and come back after. It never
    carries the kwok label, which kind's DaemonSets (kube-proxy) are kept away from."""
    core = kubernetes.client.CoreV1Api(own_cluster.api)
    real = ["real-worker-a", "real-worker-b"]
    for name in real:
        core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"vck.example/real": "yes"}}})
    key, value = nodes.LENT_NODE_LABEL

    def lent() -> list[str]:
        return sorted(n.metadata.name for n in core.list_node().items if n.metadata.name in real and (n.metadata.labels or {}).get(key) == value)

    try:
        ctx = context.RunContext(dataclasses.replace(own_cluster.handle, real_nodes=tuple(real)), reference.Reference())
        ctx.prepare_nodes(SHAPE)
        assert lent() == [] and set(kit_nodes(own_cluster.api)) == {"vck-node-0", "vck-node-1"}
        ctx.prepare_nodes((), None, real_nodes=1)
        assert lent() == ["real-worker-a"] and kit_nodes(own_cluster.api) == {}
        ctx.prepare_nodes((), None, real_nodes=2)
        assert lent() == real
        ctx.prepare_nodes(SHAPE)
        assert lent() == [] and set(kit_nodes(own_cluster.api)) == {"vck-node-0", "vck-node-1"}
        # The node's own labels are kept, and the real nodes are never deleted as kit nodes are.
        assert all(core.read_node(name).metadata.labels.get("vck.example/real") == "yes" for name in real)
        assert not any(nodes.KIT_NODE_LABEL[0] in (core.read_node(name).metadata.labels or {}) for name in real)
    finally:
        for name in real:
            core.delete_node(name)


# --- an API server that answers "not now" ------------------------------------------------------
@contextlib.contextmanager
def door(own_cluster: OwnCluster, tmp_path: pathlib.Path, *faults: faulty_api.Fault) -> Iterator[tuple[faulty_api.FaultyDoor, base.ClusterHandle]]:
    """The cluster reached through a door that answers `faults` first: a handle that uses it."""
    with faulty_api.open_door(own_cluster.handle.kubeconfig, own_cluster.handle.context, list(faults), tmp_path) as (opened, kubeconfig):
        yield opened, dataclasses.replace(own_cluster.handle, kubeconfig=kubeconfig, context=None)


def test_the_kit_rides_out_transient_api_errors_while_it_prepares_a_scenario(own_cluster: OwnCluster, tmp_path: pathlib.Path) -> None:
    """An etcd stall (500 "request timed out") or a server shedding load (429 with Retry-After)
    while the kit shapes nodes and makes the scenario's namespace: asked again, the scenario
    starts as written (seen once in a loaded `make test`: the scenario was an ERROR)."""
    faults = (
        faulty_api.Fault("GET", "/api/v1/nodes", 500, times=2),
        # The kit's own creates are asked again after a 500: a node's name is its own.
        faulty_api.Fault("POST", "/api/v1/nodes", 500, times=1),
        faulty_api.Fault("POST", "/api/v1/namespaces", 429, times=1, message="too many requests, please try again later", retry_after_s=1),
        faulty_api.Fault("POST", "/api/v1/namespaces", 500, times=1),
    )
    with door(own_cluster, tmp_path, *faults) as (opened, handle):
        ctx = context.RunContext(handle, reference.Reference())
        ctx.prepare_nodes(SHAPE)
        name = ctx.new_namespace("transient-errors")
        try:
            assert [status for _, _, status in opened.refused] == [500, 500, 500, 429, 500], opened.refused
            assert kit_nodes(own_cluster.api) == {"vck-node-0": True, "vck-node-1": True}
            labelled = kubernetes.client.CoreV1Api(own_cluster.api).list_namespace(label_selector="conformance.vck.io/scenario=transient-errors").items
            assert [n.metadata.name for n in labelled] == [name]
        finally:
            ctx.delete_namespace(name)


def test_a_create_that_may_have_been_stored_is_not_sent_again_and_asking_again_is_bounded(own_cluster: OwnCluster, tmp_path: pathlib.Path) -> None:
    """A scenario's create answered with a 500 may have been stored: sent again it could make a
    second object (a `generateName` Command would act twice), so the error is the step's, as it
    came. A read is asked again, five times, and an error that lasts is the one the caller sees."""
    faults = (
        faulty_api.Fault("POST", "/api/v1/namespaces/default/configmaps", 500, times=1),
        faulty_api.Fault("GET", "/api/v1/namespaces/default", 500, times=100),
    )
    with door(own_cluster, tmp_path, *faults) as (opened, handle):
        core = kubernetes.client.CoreV1Api(kube.client(handle.kubeconfig, handle.context))
        with pytest.raises(kubernetes.client.ApiException) as create:
            core.create_namespaced_config_map("default", {"metadata": {"generateName": "once-"}})
        assert create.value.status == 500 and len(opened.refused) == 1, opened.refused
        with pytest.raises(kubernetes.client.ApiException) as read:
            core.read_namespace("default")
        assert read.value.status == 500 and "etcdserver: request timed out" in str(read.value.body)
        assert len(opened.refused) == 1 + 6, opened.refused
