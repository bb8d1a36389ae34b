"""What a process running scenarios holds: the cluster, the implementation, and the nodes it shaped."""

from __future__ import annotations

import dataclasses
import secrets
from typing import Any, Mapping, Sequence

import kubernetes

from conformance.cluster import base, kube, nodes, profile_nodes, resources
from conformance.impl import base as impl_base
from fake_devices import profile

NAMESPACE_TIMEOUT_S = 120.0
NODES_TIMEOUT_S = 60.0
NODE = resources.lookup("Node")


@dataclasses.dataclass
class RunContext:
    cluster: base.ClusterHandle
    implementation: impl_base.Implementation
    time_scale: float = 1.0
    # The workload images by recipe name (`vck.workload/<name>`), chosen by the run.
    images: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # The cluster outlives the run (a dev session): a scenario's cleanup is never cut short by an
    # interruption, which waits until it is done (what it left would change the next verdicts).
    warm: bool = False
    api: kubernetes.client.ApiClient = dataclasses.field(init=False)
    client: resources.Client = dataclasses.field(init=False)
    _node_key: Any = None
    # The real nodes lent to the scenario now (labelled as the kit's nodes); None: not known.
    _lent: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        self.api = kube.client(self.cluster.kubeconfig, self.cluster.context)
        self.client = resources.Client(self.api)

    def forget_nodes(self) -> None:
        """The nodes may no longer be as shaped; the next prepare_nodes compares them afresh."""
        self._node_key = None
        self._lent = None

    def prepare_nodes(self, groups: Sequence[nodes.NodeGroup], prof: profile.Profile | None = None, real_nodes: int = 0) -> None:
        """Make the cluster's kwok nodes exactly the scenario's (its node groups, then its device
        profile's nodes): keep equal ones, replace the rest. Every backend has kwok nodes (the
        embedded one through kwokctl, kind and existing through the kit's kwok controller). Then
        lend the scenario `real_nodes` of the backend's real nodes, and no other scenario any."""
        self._reshape_kwok_nodes(groups, prof)
        self._lend_real_nodes(self.cluster.real_nodes[:real_nodes])

    def _lend_real_nodes(self, lent: tuple[str, ...]) -> None:
        """The scheduler under test sees only the kit's nodes and the lent ones (its node selector,
        see ClusterHandle.node_selector): a real node is the scenario's while it carries the lent
        label, and its containers run for real. Taken away again for a scenario on simulated nodes."""
        if lent == self._lent or (self._lent is None and not self.cluster.real_nodes):
            return
        self._lent = None
        key, value = nodes.LENT_NODE_LABEL
        for name in self.cluster.real_nodes:
            patch = {"metadata": {"labels": {key: value if name in lent else None}}}
            self.client.core.patch_node(name, patch)
        self._lent = lent

    def _reshape_kwok_nodes(self, groups: Sequence[nodes.NodeGroup], prof: profile.Profile | None) -> None:
        desired = {m["metadata"]["name"]: m for m in profile_nodes.node_manifests(groups, prof)}
        key = tuple(sorted((n, repr(m)) for n, m in desired.items()))
        if key == self._node_key:
            return
        # Forgotten until the new shape is whole: should making it fail (a kit error), the next
        # scenario reshapes from scratch rather than run on whatever was left.
        self._node_key = None
        deleted = set()
        for node in self.client.core.list_node().items:
            annotations = kube.meta(node).annotations or {}
            if annotations.get(nodes.KWOK_NODE_ANNOTATION) != "fake":
                continue
            want = desired.get(kube.name_of(node))
            if want is None or not profile_nodes.same_node(self.api.sanitize_for_serialization(node), want):
                self.client.delete(NODE, kube.name_of(node), None)
                deleted.add(kube.name_of(node))
        if deleted:
            kube.watch_until(self.client.core.list_node, lambda s: not deleted & set(s), NODES_TIMEOUT_S, f"nodes {sorted(deleted)} to be removed")
        self._create_nodes(list(desired.values()))
        self._node_key = key

    def add_node(self, manifest: Mapping[str, Any]) -> None:
        """One more kwok node (a scenario's `node: add` step), usable when this returns. The
        nodes are no longer as shaped: the next scenario compares them afresh."""
        self._node_key = None
        self._create_nodes([dict(manifest)])

    def _create_nodes(self, manifests: Sequence[dict[str, Any]]) -> None:
        """Create the nodes that do not exist yet and wait until every one is Ready, with a fresh
        Lease, and runs pods."""
        existing = {kube.name_of(n) for n in self.client.core.list_node().items}
        created = sorted({m["metadata"]["name"] for m in manifests} - existing)
        # A node created again under an old name must not inherit the old node's Lease.
        kube.delete_node_leases(self.api, created, NODES_TIMEOUT_S)
        kube.create_nodes(self.api, manifests)
        kube.wait_nodes_ready(self.api, [m["metadata"]["name"] for m in manifests], NODES_TIMEOUT_S)
        kube.wait_fresh_node_leases(self.api, created, NODES_TIMEOUT_S)
        kube.wait_pods_run_on(self.api, created, NODES_TIMEOUT_S)

    def prepare_devices(self, prof: profile.Profile | None) -> None:
        """Make the profile's Numatopology and HyperNode objects exactly the scenario's (none
        without a profile). Run after the implementation is up: it installs their CRDs."""
        profile_nodes.sync(self.client, profile_nodes.objects(prof))

    def new_namespace(self, scenario_id: str) -> str:
        name = f"{scenario_id[:50].rstrip('-')}-{secrets.token_hex(3)}"
        body = resources.as_model({"metadata": {"name": name, "labels": {"conformance.vck.io/scenario": scenario_id[:63].rstrip("-")}}})
        # A fresh random name: there already, it is this call's own first attempt.
        kube.create_repeatable(lambda: self.client.core.create_namespace(body))
        kube.wait_service_account(self.api, name, NAMESPACE_TIMEOUT_S)
        return name

    def delete_namespace(self, name: str) -> None:
        """Start deleting the namespace and wait until its pods and PodGroups are gone, so nothing
        of this scenario holds node or queue resources in the next one. The namespace itself is
        left to finish terminating in the background (its name is never reused): waiting for the
        namespace controller costs seconds per scenario."""
        self.client.delete(resources.lookup("Namespace"), name, None)
        # The namespace is terminating, so nothing new can be created in it; objects without
        # finalizers are gone when a collection delete returns.
        custom = kubernetes.client.CustomObjectsApi(self.api)
        for group, version, plural in (("batch.volcano.sh", "v1alpha1", "jobs"), ("scheduling.volcano.sh", "v1beta1", "podgroups")):
            try:
                custom.delete_collection_namespaced_custom_object(group, version, name, plural, propagation_policy="Background")
            except kubernetes.client.ApiException as err:
                if err.status != 404:  # an implementation without Volcano's CRDs
                    raise
        # Pods go at once (no graceful wait): the scenario is over and the nodes are simulated.
        self.client.core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
        kube.watch_until(self.client.core.list_namespaced_pod, lambda s: not s, NAMESPACE_TIMEOUT_S, f"the pods of namespace {name} to be deleted", namespace=name)

