"""The official client, configured from a kubeconfig the way vc-scheduler's --kubeconfig is."""

from __future__ import annotations

import kubernetes


# Each watch holds a connection for its life and binds run on several threads: the client's
# default pool (5 per CPU) would be exhausted and warn "Connection pool is full" on every call.
POOL_SIZE = 32


def api_client(kubeconfig: str | None) -> kubernetes.client.ApiClient:
    configuration = kubernetes.client.Configuration()
    if kubeconfig:
        kubernetes.config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    else:
        kubernetes.config.load_incluster_config(client_configuration=configuration)
    configuration.connection_pool_maxsize = POOL_SIZE
    return kubernetes.client.ApiClient(configuration)
