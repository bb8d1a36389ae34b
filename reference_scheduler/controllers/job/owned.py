"""Create-or-update of the plain objects job plugins own (ConfigMap, Service, NetworkPolicy, Secret)."""

from __future__ import annotations

import logging
from typing import Any

import kubernetes

from reference_scheduler.controllers.job.plugins import keys

log = logging.getLogger(__name__)


class OwnedObjects:
    def __init__(self, api: kubernetes.client.ApiClient) -> None:
        self.core = kubernetes.client.CoreV1Api(api)
        self.net = kubernetes.client.NetworkingV1Api(api)

    def _ops(self, kind: str) -> tuple[Any, Any, Any]:
        table = {
            "ConfigMap": (self.core.create_namespaced_config_map, self.core.patch_namespaced_config_map, self.core.delete_namespaced_config_map),
            "Service": (self.core.create_namespaced_service, None, self.core.delete_namespaced_service),
            "Secret": (self.core.create_namespaced_secret, None, self.core.delete_namespaced_secret),
            "NetworkPolicy": (self.net.create_namespaced_network_policy, None, self.net.delete_namespaced_network_policy),
        }
        return table[kind]

    def ensure(self, body: dict[str, Any]) -> None:
        """Create it; an existing ConfigMap gets its data brought up to date (hosts change when a
        job scales); other kinds are left as they are."""
        body = {k: v for k, v in body.items() if k != keys.CREATE_ONLY}
        create, patch, _ = self._ops(body["kind"])
        ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
        try:
            create(ns, body)
            return
        except kubernetes.client.ApiException as err:
            if err.status != 409:
                raise
        if patch is not None:
            patch(name, ns, {"data": body.get("data") or {}})

    def delete(self, kind: str, namespace: str, name: str) -> None:
        _, _, delete = self._ops(kind)
        try:
            delete(name, namespace)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
