"""The only place that maps a backend name to its implementation."""

from __future__ import annotations

import pathlib

from conformance.cluster import base, embedded, existing, kind

BACKENDS = ("embedded", "kind", "existing")


def backend(name: str, kubeconfig: str | None = None, context: str | None = None) -> base.ClusterBackend:
    if name == "embedded":
        return embedded.EmbeddedBackend()
    if name == "kind":
        return kind.KindBackend()
    if name == "existing":
        return existing.ExistingBackend(pathlib.Path(kubeconfig) if kubeconfig else None, context)
    raise base.ClusterError(f"unknown backend {name!r}; use one of {', '.join(BACKENDS)}")
