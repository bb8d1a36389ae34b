"""A device profile on the embedded cluster: its nodes as kwok nodes carrying what fake_devices
advertises, and its Numatopology and HyperNode objects kept in step with the scenario.

fake_devices says what a profile advertises; this module only puts it where kwok and the API
server keep it, and removes what an earlier scenario's profile left behind.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Sequence

import kubernetes

from conformance.cluster import base, nodes, resources
from fake_devices import advertise, profile

log = logging.getLogger(__name__)
# The kinds a profile adds, each cluster-scoped and named after what it describes.
KINDS = (resources.lookup("Numatopology"), resources.lookup("HyperNode"))
MANAGED = f"{advertise.MANAGED_BY_LABEL}={advertise.MANAGED_BY}"


def node_manifests(groups: Sequence[nodes.NodeGroup], prof: profile.Profile | None) -> list[dict[str, Any]]:
    """Every kwok Node of a scenario: its plain node groups first, then the profile's nodes, each
    a kwok node carrying the profile's capacity, allocatable, labels, annotations and taints."""
    manifests = nodes.kwok_nodes(groups)
    if prof is None:
        return manifests
    first = len(manifests)
    for offset, node in enumerate(prof.nodes):
        advert = advertise.node(prof, node)
        shape = nodes.NodeGroup(
            pods=node.pods,
            labels=tuple(advert.labels.items()),
            taints=tuple(nodes.Taint(t.key, t.value, t.effect) for t in advert.taints),
        )
        manifest = nodes.kwok_node(node.name, shape, first + offset)
        manifest["metadata"]["annotations"].update(advert.annotations)
        manifest["status"]["capacity"] = dict(advert.capacity)
        manifest["status"]["allocatable"] = dict(advert.allocatable)
        manifests.append(manifest)
    return manifests


def same_node(current: dict[str, Any], want: dict[str, Any]) -> bool:
    """Whether a node already is as wanted: its labels, annotations, capacity, allocatable,
    taints and images, and nothing a profile advertised that is no longer wanted (a stale supernode label or
    GPU topology would mislead the next scenario's scheduler)."""
    meta, want_meta = current.get("metadata") or {}, want["metadata"]
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    status, spec = current.get("status") or {}, current.get("spec") or {}
    return (
        all(labels.get(k) == v for k, v in want_meta["labels"].items())
        and not any(advertise.is_advertised(k) and k not in want_meta["labels"] for k in labels)
        and all(annotations.get(k) == v for k, v in (want_meta.get("annotations") or {}).items())
        and not any(advertise.is_advertised(k) and k not in (want_meta.get("annotations") or {}) for k in annotations)
        and status.get("allocatable") == want["status"]["allocatable"]
        and all((status.get("capacity") or {}).get(k) == v for k, v in want["status"]["capacity"].items())
        and (spec.get("taints") or []) == (want["spec"].get("taints") or [])
        and (status.get("images") or []) == (want["status"].get("images") or [])
        and not spec.get("unschedulable")
    )


def objects(prof: profile.Profile | None) -> list[dict[str, Any]]:
    return advertise.objects(prof) if prof else []


def _key(obj: dict[str, Any]) -> str:
    return json.dumps({"labels": (obj.get("metadata") or {}).get("labels") or {}, "spec": obj.get("spec")}, sort_keys=True)


def sync(client: resources.Client, desired: Sequence[dict[str, Any]]) -> None:
    """Make the profile objects in the cluster exactly `desired`: delete the ones an earlier
    profile made that are not wanted (or differ), create the missing ones. Objects the kit did not
    make (no managed-by label) are left alone; a scenario's own HyperNodes are its business."""
    for kind in KINDS:
        wanted = {o["metadata"]["name"]: o for o in desired if o["kind"] == kind.kind}
        try:
            listed = client.lister(kind, None)(label_selector=MANAGED)
        except kubernetes.client.ApiException as err:
            if err.status == 404 and not wanted:
                continue  # no such CRD, and nothing to make: an implementation without it
            if err.status == 404:
                raise base.ClusterError(
                    f"the profile needs {kind.kind} objects ({kind.api_version}) but the cluster has no such CRD; "
                    "install Volcano's CRDs (the reference implementation installs them) or run a scenario without HyperNode tiers"
                ) from err
            raise
        items = listed["items"] if isinstance(listed, dict) else client.api.sanitize_for_serialization(listed)["items"]
        current = {o["metadata"]["name"]: o for o in items}
        for name, obj in current.items():
            if name not in wanted or _key(obj) != _key(wanted[name]):
                client.delete(kind, name, None)
                log.debug("deleted %s %s left by an earlier profile", kind.kind, name)
        for name, obj in wanted.items():
            if name in current and _key(current[name]) == _key(obj):
                continue
            try:
                client.create(kind, obj, None)
            except kubernetes.client.ApiException as err:
                if err.status != 409:
                    raise
                # One of the same name that the kit did not make: take it over with the profile's.
                client.delete(kind, name, None)
                client.create(kind, obj, None)
