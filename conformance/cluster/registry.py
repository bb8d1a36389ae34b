"""The only place that maps a backend name to its implementation."""

from __future__ import annotations

import pathlib

from conformance.cluster import base, embedded, existing, kind, owners

BACKENDS = ("embedded", "kind", "existing")


def backend(
    name: str, kubeconfig: str | None = None, context: str | None = None, owner: owners.Owner | None = None, progress: embedded.Progress | None = None
) -> base.ClusterBackend:
    """`owner`: the process an embedded cluster belongs to (removed with it; see owners.py);
    `progress`: where lines about a slow start go (default: stderr)."""
    if name == "embedded":
        return embedded.EmbeddedBackend(owner=owner, **({"progress": progress} if progress else {}))
    if name == "kind":
        return kind.KindBackend()
    if name == "existing":
        return existing.ExistingBackend(pathlib.Path(kubeconfig) if kubeconfig else None, context)
    raise base.ClusterError(f"unknown backend {name!r}; use one of {', '.join(BACKENDS)}")
