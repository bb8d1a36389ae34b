"""Installing an implementation's CustomResourceDefinitions from YAML files: create each, replace
one of the same name another implementation installed, then wait until all are Established."""

from __future__ import annotations

import pathlib
from typing import Any, Iterable

import kubernetes
import yaml

from conformance.cluster import kube
from conformance.impl import base as impl_base

ESTABLISHED_TIMEOUT_S = 60.0


def install(api: kubernetes.client.ApiClient, files: Iterable[pathlib.Path], owner: str, timeout_s: float = ESTABLISHED_TIMEOUT_S) -> list[str]:
    """Every CRD in `files` on the cluster, as written there; their names. `owner` names whose
    CRDs they are in errors."""
    ext = kubernetes.client.ApiextensionsV1Api(api)
    names: list[str] = []
    for path in files:
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            name = doc["metadata"]["name"]
            names.append(name)
            try:
                ext.create_custom_resource_definition(doc)
            except kubernetes.client.ApiException as err:
                if err.status != 409:
                    raise impl_base.ImplementationError(f"installing {owner}'s CRD {name} from {path} failed: HTTP {err.status}: {err.body}") from err
                # Another implementation's CRD of the same name (the reference's or Volcano's): replaced.
                doc["metadata"]["resourceVersion"] = kube.meta(ext.read_custom_resource_definition(name)).resource_version
                ext.replace_custom_resource_definition(name, doc)

    def established(state: dict[str, dict[str, Any]]) -> bool:
        return all(
            any(c.get("type") == "Established" and c.get("status") == "True" for c in (state.get(n, {}).get("status") or {}).get("conditions") or [])
            for n in names
        )

    kube.watch_until(ext.list_custom_resource_definition, established, timeout_s, f"{owner}'s CRDs {', '.join(names)} to be Established")
    return names
