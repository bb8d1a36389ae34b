"""The kinds of object the kit reads and writes, and generic operations on them.

One registry maps (apiVersion, kind) to the REST resource. Core kinds go through CoreV1Api, every
other group through CustomObjectsApi (which serves any group, built-in or custom); both accept and
return plain dicts, which is all the kit needs.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Mapping, cast

import kubernetes


@dataclasses.dataclass(frozen=True)
class Kind:
    kind: str
    api_version: str
    plural: str
    namespaced: bool

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def core(self) -> bool:
        return "/" not in self.api_version

    @property
    def snake(self) -> str:
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.kind).lower()


KINDS: tuple[Kind, ...] = (
    Kind("Pod", "v1", "pods", True),
    Kind("Service", "v1", "services", True),
    Kind("ConfigMap", "v1", "config_maps", True),
    Kind("Secret", "v1", "secrets", True),
    Kind("Event", "v1", "events", True),
    Kind("ServiceAccount", "v1", "service_accounts", True),
    Kind("Node", "v1", "nodes", False),
    Kind("Namespace", "v1", "namespaces", False),
    Kind("Job", "batch.volcano.sh/v1alpha1", "jobs", True),
    Kind("PodGroup", "scheduling.volcano.sh/v1beta1", "podgroups", True),
    Kind("Queue", "scheduling.volcano.sh/v1beta1", "queues", False),
    Kind("Command", "bus.volcano.sh/v1alpha1", "commands", True),
    Kind("HyperNode", "topology.volcano.sh/v1alpha1", "hypernodes", False),
    Kind("Numatopology", "nodeinfo.volcano.sh/v1alpha1", "numatopologies", False),
    Kind("CronJob", "batch.volcano.sh/v1alpha1", "cronjobs", True),
    Kind("JobFlow", "flow.volcano.sh/v1alpha1", "jobflows", True),
    Kind("JobTemplate", "flow.volcano.sh/v1alpha1", "jobtemplates", True),
    Kind("Job", "batch/v1", "jobs", True),
    Kind("Deployment", "apps/v1", "deployments", True),
    Kind("StatefulSet", "apps/v1", "statefulsets", True),
    Kind("DaemonSet", "apps/v1", "daemonsets", True),
    Kind("ReplicaSet", "apps/v1", "replicasets", True),
    Kind("ReplicationController", "v1", "replication_controllers", True),
    Kind("PersistentVolumeClaim", "v1", "persistent_volume_claims", True),
    Kind("PersistentVolume", "v1", "persistent_volumes", False),
    Kind("NetworkPolicy", "networking.k8s.io/v1", "networkpolicies", True),
    Kind("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False),
    Kind("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
    Kind("ResourceQuota", "v1", "resourcequotas", True),
    Kind("EndpointSlice", "discovery.k8s.io/v1", "endpointslices", True),
)
# When a scenario names a kind without apiVersion, this is the one meant (Volcano's Job for "Job").
_DEFAULT = {k.kind: k for k in reversed(KINDS)}


# A patch step's `type`, as the API server's content types.
PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
}


class UnknownKind(LookupError):
    pass


def lookup(kind: str, api_version: str | None = None) -> Kind:
    if api_version:
        for k in KINDS:
            if k.kind == kind and k.api_version == api_version:
                return k
        raise UnknownKind(f"the kit does not know {api_version} {kind}; known: {', '.join(f'{k.api_version} {k.kind}' for k in KINDS)}")
    if kind not in _DEFAULT:
        raise UnknownKind(f"the kit does not know kind {kind!r}; known: {', '.join(sorted(_DEFAULT))}")
    return _DEFAULT[kind]


def of(manifest: Mapping[str, Any]) -> Kind:
    return lookup(manifest["kind"], manifest.get("apiVersion"))


def as_model(manifest: Mapping[str, Any]) -> Any:
    """`manifest` as the body of a typed client call, unchanged. The client's methods are annotated
    with their model class (V1Pod, V1Node, V1DeleteOptions, ...) and validate what they are given
    into one, a plain dict included: the kit passes dicts."""
    return manifest


class Client:
    """create/get/patch/delete/list for any registered kind, with dicts in and out."""

    def __init__(self, api: kubernetes.client.ApiClient) -> None:
        self.api = api
        self.core = kubernetes.client.CoreV1Api(api)
        self.custom = kubernetes.client.CustomObjectsApi(api)

    def _core_fn(self, verb: str, kind: Kind) -> Callable[..., Any]:
        scope = "namespaced_" if kind.namespaced else ""
        snake = kind.snake if kind.kind != "ConfigMap" else "config_map"
        if verb == "list" and kind.kind == "Namespace":
            return self.core.list_namespace
        return cast(Callable[..., Any], getattr(self.core, f"{verb}_{scope}{snake}"))

    def _dict(self, obj: Any) -> dict[str, Any]:
        return obj if isinstance(obj, dict) else self.api.sanitize_for_serialization(obj)

    def create(self, kind: Kind, body: Mapping[str, Any], namespace: str | None, dry_run: bool = False) -> dict[str, Any]:
        """Create the object; with `dry_run`, a server-side dry run: admission (webhooks too)
        judges it, nothing is stored."""
        extra: dict[str, Any] = {"dry_run": "All"} if dry_run else {}
        if kind.core:
            fn = self._core_fn("create", kind)
            return self._dict(fn(namespace, body, **extra) if kind.namespaced else fn(body, **extra))
        if kind.namespaced:
            assert namespace is not None
            return self._dict(self.custom.create_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, dict(body), **extra))
        return self._dict(self.custom.create_cluster_custom_object(kind.group, kind.version, kind.plural, dict(body), **extra))

    def get(self, kind: Kind, name: str, namespace: str | None) -> dict[str, Any]:
        if kind.core:
            fn = self._core_fn("read", kind)
            return self._dict(fn(name, namespace) if kind.namespaced else fn(name))
        if kind.namespaced:
            assert namespace is not None
            return self._dict(self.custom.get_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, name))
        return self._dict(self.custom.get_cluster_custom_object(kind.group, kind.version, kind.plural, name))

    def patch(self, kind: Kind, name: str, namespace: str | None, patch: Any, patch_type: str | None = None) -> dict[str, Any]:
        """A merge patch for custom kinds; strategic merge for core kinds (their client's default);
        `patch_type` (merge, strategic or json, a JSON Patch) says which otherwise."""
        extra: dict[str, Any] = {"_content_type": PATCH_CONTENT_TYPES[patch_type]} if patch_type else {}
        if kind.core:
            fn = self._core_fn("patch", kind)
            return self._dict(fn(name, namespace, patch, **extra) if kind.namespaced else fn(name, patch, **extra))
        if kind.namespaced:
            assert namespace is not None
            return self._dict(self.custom.patch_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, name, patch, **extra))
        return self._dict(self.custom.patch_cluster_custom_object(kind.group, kind.version, kind.plural, name, patch, **extra))

    def delete(self, kind: Kind, name: str, namespace: str | None, grace_seconds: int | None = None) -> None:
        options = as_model({"gracePeriodSeconds": grace_seconds}) if grace_seconds is not None else None
        try:
            if kind.core:
                fn = self._core_fn("delete", kind)
                if kind.namespaced:
                    fn(name, namespace, body=options)
                else:
                    fn(name, body=options)
            elif kind.namespaced:
                assert namespace is not None
                self.custom.delete_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, name, body=options)
            else:
                self.custom.delete_cluster_custom_object(kind.group, kind.version, kind.plural, name, body=options)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise

    def lister(self, kind: Kind, namespace: str | None) -> Callable[..., Any]:
        """A list function kubernetes.watch.Watch can stream (namespaced kinds: one namespace)."""
        if kind.core:
            fn = self._core_fn("list", kind)
            if kind.namespaced:
                return _named(lambda **kw: fn(namespace, **kw), fn)
            return fn
        if kind.namespaced:
            assert namespace is not None
            return _named(lambda **kw: self.custom.list_namespaced_custom_object(kind.group, kind.version, namespace, kind.plural, **kw), self.custom.list_namespaced_custom_object)
        return _named(lambda **kw: self.custom.list_cluster_custom_object(kind.group, kind.version, kind.plural, **kw), self.custom.list_cluster_custom_object)


def _named(fn: Callable[..., Any], like: Callable[..., Any]) -> Callable[..., Any]:
    # kubernetes.watch reads the wrapped function's docstring to pick its `watch` argument.
    fn.__doc__ = like.__doc__
    fn.__name__ = getattr(like, "__name__", "list")
    return fn
