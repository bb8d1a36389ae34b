"""The existing backend: any cluster reachable through a kubeconfig and context. The kit never
creates or deletes it; `up` checks it answers and `down` only forgets it."""

from __future__ import annotations

import os
import pathlib
import sys
from typing import Sequence

import kubernetes

from conformance.cluster import base, kube, nodes

READY_TIMEOUT_S = 30.0


class ExistingBackend:
    name = "existing"

    def __init__(self, kubeconfig: pathlib.Path | None = None, context: str | None = None) -> None:
        self.kubeconfig = kubeconfig or _default_kubeconfig()
        self.context = context

    def up(self, cluster: str, groups: Sequence[nodes.NodeGroup]) -> base.ClusterHandle:
        if not self.kubeconfig.is_file():
            raise base.ClusterError(f"existing backend: kubeconfig {self.kubeconfig} does not exist; pass --kubeconfig PATH (and --context NAME)")
        try:
            api = kube.client(self.kubeconfig, self.context)
        except (kubernetes.config.ConfigException, ValueError) as err:
            raise base.ClusterError(f"existing backend: cannot use {self.kubeconfig} (context {self.context or 'current'}): {err}") from err
        kube.wait_ready(api, READY_TIMEOUT_S)
        if groups and groups != nodes.parse(None):
            # The kit does not add nodes to a cluster it does not own; say so rather than ignore it.
            print(f"existing backend: cluster {cluster} keeps its own nodes; the node spec is not applied", file=sys.stderr)
        return base.ClusterHandle(name=cluster, backend=self.name, kubeconfig=self.kubeconfig, context=self.context, owned=False, reused=True)

    def down(self, cluster: str) -> None:
        print(f"existing backend: cluster {cluster} is not the kit's to stop; nothing done", file=sys.stderr)

    def status(self, cluster: str) -> base.ClusterStatus:
        try:
            kube.wait_ready(kube.client(self.kubeconfig, self.context), timeout_s=5)
        except (base.ClusterError, kubernetes.config.ConfigException, OSError, ValueError) as err:
            return base.ClusterStatus(cluster, self.name, False, self.kubeconfig, str(err))
        return base.ClusterStatus(cluster, self.name, True, self.kubeconfig, f"context {self.context or 'current'}")


def _default_kubeconfig() -> pathlib.Path:
    env = os.environ.get("KUBECONFIG", "")
    first = env.split(os.pathsep)[0] if env else ""
    return pathlib.Path(first).expanduser() if first else pathlib.Path.home() / ".kube" / "config"
