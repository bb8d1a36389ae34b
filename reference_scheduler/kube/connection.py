"""How a process reaches the API server: the lean REST path at once (kube/rest.py, read from the
kubeconfig by kube/kubeconfig.py), the official client (kube/client.py) only once something asks
for it. The scheduler does everything through the first, so it never loads the official
client's models (a third of a second of CPU before its first bind, seconds on a busy machine);
the controllers and the webhook use the second."""

from __future__ import annotations

import functools
from typing import Any

from reference_scheduler.kube import kubeconfig, rest


class Connection:
    def __init__(self, kubeconfig_path: str | None) -> None:
        self.kubeconfig_path = kubeconfig_path
        target = kubeconfig.load(kubeconfig_path)
        if target is None:  # exec plugins, auth providers: what only the official reader reads
            target = kubeconfig.from_configuration(self.api.configuration)
        self.rest = rest.Rest(target, rest.user_agent(), rest.REQUEST_TIMEOUT_S)

    @functools.cached_property
    def api(self) -> Any:
        """The official client (a kubernetes.client.ApiClient), loaded on first use."""
        # Imported here, not above: loading the official client is what this module defers.
        from reference_scheduler.kube import client

        return client.api_client(self.kubeconfig_path)
