"""Talking to a cluster through the official client: readiness, nodes, namespaces.

Waits are on observed state with a deadline: watches where the API offers them, and a short poll
only for the API server's own /readyz, which cannot be watched before the server is up.
"""

from __future__ import annotations

import copy
import functools
import pathlib
import time
from typing import Any, Callable, Iterable, Protocol, Sequence

import kubernetes
import urllib3
import yaml

from conformance.cluster import base, resources

# A scenario's timeline watch, its waits and the webhook checks each hold a connection at once:
# the client's default pool (10 on two cores) overflowed and warned "Connection pool is full,
# discarding connection" many times a run.
POOL_SIZE = 32
# An API server answers now and then with an error that says "not now" rather than "no": etcd's
# "request timed out" (500) when a loaded machine stalls it, 503 while it sheds load, 504, 429
# with Retry-After. The API server is the kit's infrastructure, not the implementation under
# test: such an answer to the kit's own requests (shaping nodes, a scenario's steps and waits) is
# asked again, up to five times with growing pauses (0.4 to 3.2 s) before it counts. Asked again
# as client-go asks: any request the server says to come back to (Retry-After, which it sends only
# for one it did nothing with), else only one whose repeat changes nothing (GET, PUT, DELETE): a
# create whose first answer was a 500 may have been stored (a repeat of a `generateName` create
# would make a second object). The kit's own creates that may be repeated say so (create_repeatable).
TRANSIENT_STATUSES = (500, 503, 504)
# The pause before each of the five repeats: urllib3's backoff for a backoff_factor of 0.2.
RETRY_PAUSES_S = (0.0, 0.4, 0.8, 1.6, 3.2)
# The longest Retry-After the kit waits out (the API server's own load shedding says 1 s).
MAX_RETRY_AFTER_S = 5.0


class _TransientRetry(urllib3.Retry):
    """urllib3's Retry for TRANSIENT_STATUSES on the methods a repeat cannot change, and for every
    method when the answer carries Retry-After (a 429 without it is a refusal: a PodDisruptionBudget
    keeping a pod, say)."""

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if has_retry_after and status_code in (429, *TRANSIENT_STATUSES):
            return True
        return bool(super().is_retry(method, status_code, has_retry_after))

    def get_retry_after(self, response: Any) -> float | None:
        after = super().get_retry_after(response)
        return None if after is None else min(float(after), MAX_RETRY_AFTER_S)


TRANSIENT_RETRIES = _TransientRetry(
    total=None, connect=3, read=2, redirect=0, status=len(RETRY_PAUSES_S), other=0,
    status_forcelist=TRANSIENT_STATUSES, allowed_methods=urllib3.Retry.DEFAULT_ALLOWED_METHODS, backoff_factor=0.2,
    # The last answer is returned as it came, so the client raises its ApiException as before.
    raise_on_status=False, respect_retry_after_header=True,
)


def client(kubeconfig: pathlib.Path, context: str | None = None) -> kubernetes.client.ApiClient:
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), context=context, client_configuration=configuration)
    configuration.connection_pool_maxsize = POOL_SIZE
    configuration.retries = TRANSIENT_RETRIES
    return kubernetes.client.ApiClient(configuration)


class Stored(Protocol):
    """An object as the client's models return it (V1Node, V1Pod, ...)."""

    @property
    def metadata(self) -> kubernetes.client.V1ObjectMeta | None: ...


def meta(obj: Stored) -> kubernetes.client.V1ObjectMeta:
    """The metadata of an object the API server returned: always set (the models type every field
    Optional)."""
    assert obj.metadata is not None
    return obj.metadata


def name_of(obj: Stored) -> str:
    """The name of an object the API server returned: always set."""
    name = meta(obj).name
    assert name is not None
    return name


def without_retries(api: kubernetes.client.ApiClient) -> kubernetes.client.ApiClient:
    """A client of the same server that asks once: for a poll, whose own loop asks again (a
    starting API server's /readyz answers 500 until it is ready)."""
    configuration = copy.copy(api.configuration)
    configuration.retries = False
    return kubernetes.client.ApiClient(configuration)


def wait_ready(api: kubernetes.client.ApiClient, timeout_s: float) -> None:
    """Until /readyz answers ok; ClusterError with the last answer when the deadline passes."""
    with without_retries(api) as probe:
        _poll_ready(probe, timeout_s)


def _poll_ready(api: kubernetes.client.ApiClient, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    last = "no answer yet"
    while time.monotonic() < deadline:
        try:
            method, url, headers, body, _ = api.param_serialize("GET", "/readyz", auth_settings=["BearerToken"])
            resp = api.call_api(method, url, header_params=headers, body=body, _request_timeout=5)
            resp.read()
            text = (resp.data or b"").decode(errors="replace")
            if resp.status == 200 and text.strip() == "ok":
                return
            last = f"HTTP {resp.status}: {text[:200]}"
        except (urllib3.exceptions.HTTPError, kubernetes.client.ApiException, OSError) as err:
            last = f"{err.__class__.__name__}: {err}"
        time.sleep(0.2)  # polling /readyz: nothing can be watched before the API server serves
    raise base.ClusterError(f"the API server did not become ready within {timeout_s:.0f}s (last: {last})")


def watch_until(
    list_fn: Callable[..., Any],
    done: Callable[[dict[str, dict[str, Any]]], bool],
    timeout_s: float,
    what: str,
    **list_kwargs: Any,
) -> dict[str, dict[str, Any]]:
    """Watch objects from `list_fn` until `done(state)`; state maps name -> object (as dicts).

    Lists first, so objects that already satisfy it count, then follows the watch from that
    resourceVersion. Raises ClusterError naming `what` and the last state on timeout.
    """
    deadline = time.monotonic() + timeout_s
    state: dict[str, dict[str, Any]] = {}
    api_client = list_fn.__self__.api_client  # type: ignore[attr-defined]
    listed = list_fn(**list_kwargs)
    for item in listed.items:
        obj = api_client.sanitize_for_serialization(item)
        state[obj["metadata"]["name"]] = obj
    if done(state):
        return state
    version = listed.metadata.resource_version
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise base.ClusterError(f"timed out after {timeout_s:.0f}s waiting for {what}; last seen: {sorted(state)}")
        watcher = kubernetes.watch.Watch()
        try:
            for event in watcher.stream(list_fn, resource_version=version, timeout_seconds=max(1, int(remaining)), **list_kwargs):
                obj = event["raw_object"]
                version = obj["metadata"]["resourceVersion"]
                if event["type"] == "DELETED":
                    state.pop(obj["metadata"]["name"], None)
                else:
                    state[obj["metadata"]["name"]] = obj
                if done(state):
                    return state
        finally:
            watcher.stop()


# Taints kube-controller-manager's node lifecycle controller puts on a node whose Ready condition
# is not (yet) True, and takes off once it sees the node Ready: a new node has one for a moment
# after it is Ready, and a scheduler that honours taints would not place pods on it meanwhile.
CONDITION_TAINTS = frozenset({"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"})


def node_ready(node: dict[str, Any]) -> bool:
    """Ready, and seen Ready by the node lifecycle controller (none of its condition taints)."""
    conditions = node.get("status", {}).get("conditions") or []
    taints = node.get("spec", {}).get("taints") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions) and not any(t.get("key") in CONDITION_TAINTS for t in taints)


def create_repeatable(create: Callable[[], object]) -> bool:
    """Send a create the kit may repeat (the object's name is its own, and finding it there is as
    good as making it), asked again after a 500 or 504 on the client's schedule: the object may or
    may not be stored. True when this created it, False when it was there (409: from before, or
    stored by an attempt whose answer was lost)."""
    for repeat, pause in enumerate((0.0, *RETRY_PAUSES_S)):
        time.sleep(pause)  # the pause before asking again, as the client's retries pause
        try:
            create()
            return True
        except kubernetes.client.ApiException as err:
            if err.status == 409:
                return False
            if err.status not in (500, 504) or repeat == len(RETRY_PAUSES_S):
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def create_nodes(api: kubernetes.client.ApiClient, manifests: Iterable[dict[str, Any]]) -> list[str]:
    """Create each node, skipping those that already exist; return the names asked for."""
    core = kubernetes.client.CoreV1Api(api)
    names = []
    for manifest in manifests:
        names.append(manifest["metadata"]["name"])
        try:
            create_repeatable(functools.partial(core.create_node, resources.as_model(manifest)))
        except kubernetes.client.ApiException as err:
            raise base.ClusterError(f"creating node {manifest['metadata']['name']} failed: HTTP {err.status} {err.reason}: {err.body}") from err
    return names


def wait_nodes_ready(api: kubernetes.client.ApiClient, names: Sequence[str], timeout_s: float) -> None:
    core = kubernetes.client.CoreV1Api(api)
    wanted = set(names)
    watch_until(
        core.list_node,
        lambda state: all(n in state and node_ready(state[n]) for n in wanted),
        timeout_s,
        f"nodes {', '.join(sorted(wanted))} to be Ready",
    )


def wait_service_account(api: kubernetes.client.ApiClient, namespace: str, timeout_s: float) -> None:
    """Pods cannot be created in a namespace before kube-controller-manager made its `default` account."""
    core = kubernetes.client.CoreV1Api(api)
    watch_until(
        core.list_namespaced_service_account,
        lambda state: "default" in state,
        timeout_s,
        f"the default ServiceAccount in namespace {namespace}",
        namespace=namespace,
    )


def wait_pod(
    api: kubernetes.client.ApiClient,
    namespace: str,
    name: str,
    done: Callable[[dict[str, Any]], bool],
    timeout_s: float,
    what: str,
) -> dict[str, Any]:
    """Watch one pod until `done(pod)`; return it as a dict."""
    core = kubernetes.client.CoreV1Api(api)
    state = watch_until(
        core.list_namespaced_pod,
        lambda s: name in s and done(s[name]),
        timeout_s,
        f"pod {namespace}/{name} {what}",
        namespace=namespace,
        field_selector=f"metadata.name={name}",
    )
    return state[name]


def wait_pod_gone(api: kubernetes.client.ApiClient, namespace: str, name: str, timeout_s: float) -> None:
    core = kubernetes.client.CoreV1Api(api)
    watch_until(
        core.list_namespaced_pod,
        lambda s: name not in s,
        timeout_s,
        f"pod {namespace}/{name} to be gone",
        namespace=namespace,
        field_selector=f"metadata.name={name}",
    )


def phase_is(*phases: str) -> Callable[[dict[str, Any]], bool]:
    return lambda pod: pod.get("status", {}).get("phase") in phases


PROBE_LABEL = "conformance.vck.io/node-probe"


def wait_pods_run_on(api: kubernetes.client.ApiClient, names: Sequence[str], timeout_s: float, namespace: str = "default") -> None:
    """Prove kwok runs pods on these nodes: bind a probe pod to each, wait until all are Running,
    delete them. A node that reports Ready may not yet be followed by kwok's pod controller (seen
    right after a node was deleted and created again under the same name); without this, a pod
    bound in that moment could stay Pending for good."""
    if not names:
        return
    core = kubernetes.client.CoreV1Api(api)
    probes = {f"vck-probe-{name}"[:63]: name for name in names}
    for probe, node in probes.items():
        body = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": probe, "labels": {PROBE_LABEL: "true"}},
            "spec": {"nodeName": node, "restartPolicy": "Never", "containers": [{"name": "probe", "image": "probe"}], "terminationGracePeriodSeconds": 0},
        }
        try:
            core.create_namespaced_pod(namespace, resources.as_model(body))
        except kubernetes.client.ApiException as err:
            if err.status != 409:
                raise base.ClusterError(f"creating the probe pod for node {node} failed: HTTP {err.status} {err.reason}") from err
    try:
        watch_until(
            core.list_namespaced_pod,
            lambda state: all((state.get(p) or {}).get("status", {}).get("phase") == "Running" for p in probes),
            timeout_s,
            f"probe pods to run on nodes {', '.join(sorted(names))}",
            namespace=namespace, label_selector=PROBE_LABEL,
        )
    finally:
        core.delete_collection_namespaced_pod(namespace, label_selector=PROBE_LABEL, grace_period_seconds=0)
        watch_until(core.list_namespaced_pod, lambda state: not state, timeout_s, "probe pods to be deleted", namespace=namespace, label_selector=PROBE_LABEL)


NODE_LEASE_NAMESPACE = "kube-node-lease"


def wait_fresh_node_leases(api: kubernetes.client.ApiClient, names: Sequence[str], timeout_s: float) -> None:
    """Wait until kwok holds a Lease for each node that belongs to the node as it is now.

    kwok follows a node's pods only while it holds the node's Lease. A node deleted and created
    again under the same name inherits the old Lease, still owned by the old node's uid: the
    garbage collector deletes it moments later, kwok loses its hold, and pods bound in that gap
    stay Pending until kwok's next lease sync (tens of seconds). delete_node_leases prevents
    that; should a stale Lease still appear, it is deleted here and the wait lasts until kwok has
    made a fresh one."""
    if not names:
        return
    core = kubernetes.client.CoreV1Api(api)
    coordination = kubernetes.client.CoordinationV1Api(api)
    uids = {name_of(n): meta(n).uid for n in core.list_node().items if name_of(n) in set(names)}
    deleted: set[str] = set()

    def fresh(state: dict[str, Any]) -> bool:
        ok = True
        for name in names:
            lease = state.get(name)
            if lease is None:
                ok = False
                continue
            owners = [ref.get("uid") for ref in lease["metadata"].get("ownerReferences") or []]
            if owners and uids.get(name) not in owners:
                ok = False
                if name not in deleted:
                    deleted.add(name)
                    try:
                        coordination.delete_namespaced_lease(name, NODE_LEASE_NAMESPACE)
                    except kubernetes.client.ApiException as err:
                        if err.status != 404:
                            raise
        return ok

    watch_until(coordination.list_namespaced_lease, fresh, timeout_s, f"kwok to hold fresh leases of nodes {', '.join(sorted(names))}", namespace=NODE_LEASE_NAMESPACE)


def delete_node_leases(api: kubernetes.client.ApiClient, names: Iterable[str], timeout_s: float) -> None:
    """Delete the Leases of nodes that are gone, and wait until they are, so a node created again
    under the same name starts with a Lease of its own (see wait_fresh_node_leases)."""
    wanted = set(names)
    if not wanted:
        return
    coordination = kubernetes.client.CoordinationV1Api(api)
    for name in sorted(wanted):
        try:
            coordination.delete_namespaced_lease(name, NODE_LEASE_NAMESPACE)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
    watch_until(coordination.list_namespaced_lease, lambda state: not wanted & set(state), timeout_s, f"the leases of nodes {sorted(wanted)} to be deleted", namespace=NODE_LEASE_NAMESPACE)


def kubeconfig_selecting(kubeconfig: pathlib.Path, context: str | None, folder: pathlib.Path) -> pathlib.Path:
    """The kubeconfig for a program that takes no --context (kwok, the implementations' processes):
    the file itself when no context is named, else a private copy in `folder` that selects it."""
    if not context:
        return kubeconfig
    doc = yaml.safe_load(kubeconfig.read_text())
    doc["current-context"] = context
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    copy = folder / "kubeconfig"
    copy.write_text(yaml.safe_dump(doc, sort_keys=False))
    copy.chmod(0o600)
    return copy
