"""`vck bench scheduler`: how fast an implementation binds gangs on kwok nodes.

An embedded cluster of `--nodes` kwok nodes is started, the implementation runs with a plain gang
conf, and `--pods` pods in PodGroups of `--gang` members are created at once (PodGroups and pods
directly, so the job controller is not measured). One watch records when each pod is first seen
bound. Printed: pods per second (all pods over the time from the first create to the last bind)
and p50/p99 of the time from a PodGroup's creation to all of its pods bound.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import secrets
import statistics
import threading
import time
from typing import Any, Callable

import kubernetes

from conformance.cluster import kube, nodes, owners, registry, resources
from conformance.impl import registry as impl_registry

BENCH_CONF: dict[str, Any] = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}]},
        {"plugins": [{"name": "predicates"}, {"name": "proportion"}]},
    ],
}
CREATE_WORKERS = 8
Progress = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class BenchConfig:
    nodes: int = 10
    pods: int = 100
    gang: int = 10
    impl: str = "reference"
    cluster: str = "vck-bench"
    node_cpu: str = "32"
    timeout_s: float = 600.0


@dataclasses.dataclass(frozen=True)
class BenchResult:
    config: BenchConfig
    bound: int
    seconds: float
    group_latencies_s: list[float]

    @property
    def complete(self) -> bool:
        return self.bound == self.config.pods

    @property
    def pods_per_s(self) -> float:
        return self.bound / self.seconds if self.seconds > 0 else 0.0

    def percentile(self, q: float) -> float | None:
        if not self.group_latencies_s:
            return None
        if len(self.group_latencies_s) == 1:
            return self.group_latencies_s[0]
        return statistics.quantiles(self.group_latencies_s, n=100, method="inclusive")[round(q) - 1]

    def table(self) -> str:
        def fmt(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.2f}s"

        header = f"{'implementation':<24} {'nodes':>6} {'pods':>7} {'bound':>7} {'pods/s':>8} {'p50':>8} {'p99':>8}"
        row = (f"{self.config.impl:<24} {self.config.nodes:>6} {self.config.pods:>7} {self.bound:>7} "
               f"{self.pods_per_s:>8.1f} {fmt(self.percentile(50)):>8} {fmt(self.percentile(99)):>8}")
        return f"{header}\n{row}"


class _BindWatch:
    """Follows the namespace's pods and notes the moment each one is first seen with a node."""

    def __init__(self, api: kubernetes.client.ApiClient, namespace: str) -> None:
        self.core = kubernetes.client.CoreV1Api(api)
        self.namespace = namespace
        self.bound_at: dict[str, float] = {}
        self.cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-watch", daemon=True)
        self._version = _list_version(self.core.list_namespaced_pod(namespace, limit=1))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _note(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        if (pod.get("spec") or {}).get("nodeName") and name not in self.bound_at:
            with self.cond:
                self.bound_at[name] = time.monotonic()
                self.cond.notify_all()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                stream = kubernetes.watch.Watch().stream(
                    self.core.list_namespaced_pod, self.namespace, resource_version=self._version, timeout_seconds=30, deserialize=False
                )
                for event in stream:
                    obj = event.get("raw_object") or {}
                    if event["type"] == "ERROR":
                        # Usually 410 Gone: the version is too old to resume from. List again.
                        raise RuntimeError(f"watch error: {obj.get('message', obj)}")
                    self._version = obj["metadata"]["resourceVersion"]
                    if event["type"] in ("ADDED", "MODIFIED"):
                        self._note(obj)
                    if self._stop.is_set():
                        return
            except Exception:  # a dropped watch: list what is bound, then follow again
                if self._stop.is_set():
                    return  # measured already: the cluster going away ended the watch
                listed = self.core.list_namespaced_pod(self.namespace)
                for item in listed.items:
                    self._note(self.core.api_client.sanitize_for_serialization(item))
                self._version = _list_version(listed)

    def wait_for(self, count: int, timeout_s: float) -> int:
        deadline = time.monotonic() + timeout_s
        with self.cond:
            while len(self.bound_at) < count and time.monotonic() < deadline:
                self.cond.wait(deadline - time.monotonic())
            return len(self.bound_at)


def _list_version(listed: kubernetes.client.V1PodList) -> str | None:
    """A list's resourceVersion (the API server always sets its metadata)."""
    assert listed.metadata is not None
    return listed.metadata.resource_version


def _podgroup(name: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": members, "queue": "default", "minResources": {"cpu": str(members)}},
    }


def _pod(name: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": {
            "schedulerName": "volcano", "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": "bench", "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}],
        },
    }


def run(config: BenchConfig, progress: Progress) -> BenchResult:
    if config.pods % config.gang:
        raise ValueError(f"--pods {config.pods} is not a multiple of --gang {config.gang}")
    backend = registry.backend("embedded", owner=owners.current())
    group = nodes.NodeGroup(count=config.nodes, cpu=config.node_cpu, memory="256Gi", pods=110, prefix="bench")
    progress(f"bench: starting an embedded cluster of {config.nodes} nodes")
    handle = backend.up(config.cluster, [group])
    impl = impl_registry.implementation(config.impl)
    try:
        impl.ensure(handle, BENCH_CONF)
        api = kube.client(handle.kubeconfig)
        core = kubernetes.client.CoreV1Api(api)
        custom = kubernetes.client.CustomObjectsApi(api)
        namespace = f"vck-bench-{secrets.token_hex(3)}"
        core.create_namespace(resources.as_model({"metadata": {"name": namespace}}))
        kube.wait_service_account(api, namespace, 60)
        watch = _BindWatch(api, namespace)
        watch.start()
        groups = config.pods // config.gang
        created_at: dict[int, float] = {}

        def create_group(g: int) -> None:
            created_at[g] = time.monotonic()
            # Raw responses: reading each one back into the client's models would cost the bench
            # more than the API server's work and slow down creation.
            custom.create_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", namespace, "podgroups", _podgroup(f"pg-{g}", config.gang), _preload_content=False)
            for i in range(config.gang):
                core.create_namespaced_pod(namespace, resources.as_model(_pod(f"pg-{g}-{i}", f"pg-{g}")), _preload_content=False)

        progress(f"bench: creating {groups} PodGroups of {config.gang} pods with {config.impl}")
        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(CREATE_WORKERS) as pool:
            list(pool.map(create_group, range(groups)))
        progress(f"bench: created {config.pods} pods in {time.monotonic() - started:.1f}s; waiting for binds")
        bound = watch.wait_for(config.pods, config.timeout_s)
        watch.stop()
        last = max(watch.bound_at.values(), default=started)
        latencies = []
        for g in range(groups):
            times = [watch.bound_at.get(f"pg-{g}-{i}") for i in range(config.gang)]
            if all(t is not None for t in times):
                latencies.append(max(t for t in times if t is not None) - created_at[g])
        return BenchResult(config, bound, last - started, sorted(latencies))
    finally:
        impl.stop()
        backend.down(config.cluster)
