"""The official client, configured from a kubeconfig the way vc-scheduler's --kubeconfig is."""

from __future__ import annotations

import urllib.parse
from typing import Any, Mapping

import kubernetes

from reference_scheduler.kube import kubeconfig, rest

# Each watch holds a connection for its life and binds run on several threads: the client's
# default pool (5 per CPU) would be exhausted and warn "Connection pool is full" on every call.
POOL_SIZE = 32

# (connect, read) seconds for every call that is not a watch (why: rest.REQUEST_TIMEOUT_S).
REQUEST_TIMEOUT_S: tuple[float, float] = rest.REQUEST_TIMEOUT_S


def as_body(manifest: Mapping[str, Any]) -> Any:
    """`manifest` as the body of a typed client call, unchanged. The client's methods are annotated
    with their model class (V1Pod, V1DeleteOptions, ...) and serialize a plain dict as well, which
    is what the reference passes."""
    return manifest


def is_watch(url: str) -> bool:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    return any(v.lower() in ("true", "1") for v in query.get("watch", []))


class BoundedApiClient(kubernetes.client.ApiClient):
    """An ApiClient whose calls, watches excepted, give up after REQUEST_TIMEOUT_S unless the
    caller names its own timeout. A watch is bounded by its server-side timeoutSeconds instead."""

    def call_api(self, method: str, url: str, header_params: Any = None, body: Any = None, post_params: Any = None, _request_timeout: Any = None) -> Any:
        if _request_timeout is None and not is_watch(url):
            _request_timeout = REQUEST_TIMEOUT_S
        return super().call_api(method, url, header_params=header_params, body=body, post_params=post_params, _request_timeout=_request_timeout)


def api_client(kubeconfig: str | None) -> kubernetes.client.ApiClient:
    configuration = kubernetes.client.Configuration()
    if kubeconfig:
        kubernetes.config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    else:
        kubernetes.config.load_incluster_config(client_configuration=configuration)
    configuration.connection_pool_maxsize = POOL_SIZE
    api = BoundedApiClient(configuration)
    api.user_agent = rest.user_agent()
    return api


def lean(api: kubernetes.client.ApiClient) -> rest.Rest:
    """The lean REST path (kube/rest.py) to the same server, as the same client, with the same
    bounds on every call."""
    return rest.Rest(kubeconfig.from_configuration(api.configuration), api.user_agent, REQUEST_TIMEOUT_S)
