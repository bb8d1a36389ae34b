"""The existing backend: any cluster reachable through a kubeconfig and context. The kit never
creates or deletes it; `up` checks it answers and `down` only forgets it."""

from __future__ import annotations

import os
import pathlib
import sys
from typing import Sequence

import kubernetes
import yaml

from conformance.cluster import base, kube, nodes

READY_TIMEOUT_S = 30.0
# The preflight gives an unreachable API server this long before it says so.
PREFLIGHT_TIMEOUT_S = 15.0


class ExistingBackend:
    name = "existing"

    def __init__(self, kubeconfig: pathlib.Path | None = None, context: str | None = None) -> None:
        self._given = kubeconfig is not None
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

    def preflight(self) -> list[str]:
        """What stops this backend from working, one line each, before any scenario runs: no
        kubeconfig, one that does not load, an unknown context, an API server that does not
        answer within PREFLIGHT_TIMEOUT_S. Empty when it is usable."""
        where = "KUBECONFIG" if os.environ.get("KUBECONFIG") else "the default"
        if not self.kubeconfig.is_file():
            return [f"existing backend: kubeconfig {self.kubeconfig} ({where if not self._given else 'given'}) does not exist; pass --kubeconfig PATH (and --context NAME)"]
        try:
            doc = yaml.safe_load(self.kubeconfig.read_text())
        except (OSError, yaml.YAMLError) as err:
            return [f"existing backend: kubeconfig {self.kubeconfig} cannot be read as YAML: {err}".replace("\n", " ")]
        contexts = [c.get("name") for c in (doc or {}).get("contexts") or [] if isinstance(c, dict)] if isinstance(doc, dict) else []
        if self.context is not None and self.context not in contexts:
            return [f"existing backend: context {self.context!r} is not in {self.kubeconfig}; its contexts: {', '.join(map(str, contexts)) or 'none'}"]
        try:
            configuration = kubernetes.client.Configuration()
            kubernetes.config.load_kube_config(config_file=str(self.kubeconfig), context=self.context, client_configuration=configuration)
        except (kubernetes.config.ConfigException, ValueError, TypeError, KeyError, AttributeError) as err:
            return [f"existing backend: cannot use {self.kubeconfig} (context {self.context or 'current'}): {err}"]
        # No retries inside a request: the deadline alone decides how long an unreachable server gets.
        configuration.retries = 0
        api = kubernetes.client.ApiClient(configuration)
        try:
            kube.wait_ready(api, PREFLIGHT_TIMEOUT_S)
        except base.ClusterError as err:
            return [f"existing backend: the API server {api.configuration.host} (context {self.context or 'current'}) does not answer: {err}"]
        return []

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
