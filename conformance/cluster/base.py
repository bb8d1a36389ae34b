"""The protocol every cluster backend implements, and the handle a started cluster is known by."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Protocol, Sequence

from conformance.cluster import nodes

# The backends, by the names a run gives them (registry.py maps each to its implementation).
BACKENDS = ("embedded", "kind", "existing")


class ClusterError(RuntimeError):
    """A cluster could not be started, found or stopped; the message says which and what to do."""


@dataclasses.dataclass(frozen=True)
class ClusterHandle:
    """What a caller needs to talk to a cluster: the kubeconfig and context, and who owns it."""

    name: str
    backend: str
    kubeconfig: pathlib.Path
    context: str | None = None
    # True when the kit created the cluster and must stop it; False for a cluster it only uses.
    owned: bool = True
    # True when `up` found this cluster already running and reused it.
    reused: bool = False
    # The kit's folder for this cluster (kubeconfig, logs; removed by `down`): where an
    # implementation keeps its own working files. None when the kit keeps none (existing).
    state_dir: pathlib.Path | None = None
    # This machine's address as the cluster's API server reaches it: where an implementation's
    # admission webhook running here listens (127.0.0.1 embedded; kind's Docker network gateway).
    host_address: str = "127.0.0.1"
    # vc-scheduler's `--node-selector` items (`key:value`) that keep the scheduler under test to
    # the kit's nodes where the cluster has real ones too (kind's control plane, an existing
    # cluster's nodes); empty where every node is the kit's.
    node_selector: tuple[str, ...] = ()
    # Nodes that run containers and may be lent to a scenario that asks for them (`real_nodes`):
    # kind's real workers; empty where the backend has none to lend (embedded, existing).
    real_nodes: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class ClusterStatus:
    name: str
    backend: str
    running: bool
    kubeconfig: pathlib.Path | None
    detail: str = ""


class ClusterBackend(Protocol):
    """Start, find and stop a cluster. The same scenario runs unchanged on every backend."""

    name: str

    def up(self, cluster: str, groups: Sequence[nodes.NodeGroup]) -> ClusterHandle:
        """Create the cluster (or reuse a healthy one of the same name) with nodes from `groups`."""
        ...

    def down(self, cluster: str) -> None:
        """Stop every process the backend started for `cluster` and remove its state."""
        ...

    def status(self, cluster: str) -> ClusterStatus:
        ...
