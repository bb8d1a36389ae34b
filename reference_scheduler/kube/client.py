"""The official client, configured from a kubeconfig the way vc-scheduler's --kubeconfig is."""

from __future__ import annotations

import kubernetes


def api_client(kubeconfig: str | None) -> kubernetes.client.ApiClient:
    if kubeconfig:
        return kubernetes.config.new_client_from_config(config_file=kubeconfig)
    kubernetes.config.load_incluster_config()
    return kubernetes.client.ApiClient()
