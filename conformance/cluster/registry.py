"""The only place that maps a backend name to its implementation."""

from __future__ import annotations

import pathlib
from typing import TypedDict

from conformance.cluster import base, embedded, existing, kind, owners
from conformance.toolchain import versions

BACKENDS = base.BACKENDS


class _Said(TypedDict, total=False):
    progress: embedded.Progress


def backend(
    name: str,
    kubeconfig: str | None = None,
    context: str | None = None,
    owner: owners.Owner | None = None,
    progress: embedded.Progress | None = None,
    kind_workers: int = 0,
    kind_image: str | None = None,
    host_address: str | None = None,
    kube_version: str | None = None,
    kind_images: tuple[str, ...] = (),
    kind_device_plugin: bool = False,
    lend_nodes: int = 0,
) -> base.ClusterBackend:
    """`owner`: the process a cluster the kit creates belongs to (embedded, kind: removed with it;
    existing: the kit's kwok controller and nodes there; see owners.py);
    `progress`: where lines about a slow start go (default: stderr); `kind_workers`: real kind
    workers beside the control plane; `kind_image`: the node image kind runs (None: the kit's);
    `host_address`: this machine's address as an existing
    cluster's API server reaches it (default: the address it is reached from); `kube_version`: the
    pinned Kubernetes release an embedded cluster runs, or kind's node image is of (None: the
    default); `kind_images`: images of this machine's engine kind loads into its real workers;
    `kind_device_plugin`: the fake device plugin on those workers; `lend_nodes`: how many of an
    existing cluster's own nodes scenarios that run real containers may be lent."""
    said: _Said = {"progress": progress} if progress else {}
    if name == "embedded":
        return embedded.EmbeddedBackend(owner=owner, kube_version=kube_version or versions.KUBERNETES_VERSION, **said)
    if name == "kind":
        kube = kube_version or versions.KUBERNETES_VERSION
        if kind_image is not None:
            return kind.KindBackend(workers=kind_workers, node_image=kind_image, node_kube=None, owner=owner, images=kind_images, device_plugin=kind_device_plugin, **said)
        return kind.KindBackend(workers=kind_workers, node_image=versions.kind_node_image(kube), node_kube=kube, owner=owner, images=kind_images, device_plugin=kind_device_plugin, **said)
    if name == "existing":
        return existing.ExistingBackend(pathlib.Path(kubeconfig) if kubeconfig else None, context, host_address=host_address, lend_nodes=lend_nodes, owner=owner, **said)
    raise base.ClusterError(f"unknown backend {name!r}; use one of {', '.join(BACKENDS)}")
