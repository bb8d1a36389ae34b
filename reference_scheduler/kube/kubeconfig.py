"""Where the API server is and how to prove who we are, read from a kubeconfig (or, without one,
from the pod's service account) without loading the official client.

Loading the official client's kubeconfig reader costs the scheduler a third of a second of CPU
at start, before it can bind anything. This reader takes the common forms: the current (or only)
context's cluster server and CA (file or data, or insecure-skip-tls-verify) and user client
certificate and key (files or data) or bearer token (inline or file). A kubeconfig that needs more
(exec credential plugins, auth providers) gives None, and the caller uses the official client's
reader instead.
"""

from __future__ import annotations

import atexit
import base64
import dataclasses
import os
import pathlib
import tempfile
from typing import Any

import yaml

SERVICE_ACCOUNT = pathlib.Path("/var/run/secrets/kubernetes.io/serviceaccount")


@dataclasses.dataclass(frozen=True)
class Target:
    """What a connection to the API server needs (files, as Python's ssl module takes them)."""

    server: str
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    token: str | None = None
    insecure: bool = False


def _private_file(data: bytes, suffix: str) -> str:
    """Certificate or key data written to a file only this user reads, removed at exit."""
    fd, name = tempfile.mkstemp(prefix="vck-kube-", suffix=suffix)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    atexit.register(lambda: pathlib.Path(name).unlink(missing_ok=True))
    return name


def _file_or_data(entry: dict[str, Any], key: str, base: pathlib.Path, suffix: str) -> str | None:
    if entry.get(f"{key}-data"):
        return _private_file(base64.b64decode(entry[f"{key}-data"]), suffix)
    if entry.get(key):
        path = pathlib.Path(entry[key])
        return str(path if path.is_absolute() else base / path)
    return None


def _named(items: list[dict[str, Any]], name: str | None, kind: str) -> dict[str, Any]:
    found = [item for item in items if name is None or item.get("name") == name]
    if not found:
        raise ValueError(f"the kubeconfig has no {kind} {name!r}")
    return dict(found[0].get(kind) or {})


def load(kubeconfig: str | None, context: str | None = None) -> Target | None:
    """The target of `kubeconfig`'s context (its current one when None), or of the pod's service
    account when no kubeconfig is given; None when it needs the official client's reader."""
    if not kubeconfig:
        return in_cluster()
    path = pathlib.Path(kubeconfig)
    doc = yaml.safe_load(path.read_text()) or {}
    contexts = doc.get("contexts") or []
    chosen = context or doc.get("current-context") or (contexts[0].get("name") if len(contexts) == 1 else None)
    ctx = _named(contexts, chosen, "context")
    cluster = _named(doc.get("clusters") or [], ctx.get("cluster"), "cluster")
    user = _named(doc.get("users") or [], ctx.get("user"), "user") if ctx.get("user") else {}
    if user.get("exec") or user.get("auth-provider") or user.get("username") or cluster.get("proxy-url"):
        return None
    base = path.parent
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = pathlib.Path(user["tokenFile"]).read_text().strip()
    return Target(
        server=cluster["server"],
        ca_file=_file_or_data(cluster, "certificate-authority", base, ".crt"),
        cert_file=_file_or_data(user, "client-certificate", base, ".crt"),
        key_file=_file_or_data(user, "client-key", base, ".key"),
        token=token,
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
    )


def in_cluster() -> Target | None:
    """The pod's service account, as the official client's in-cluster config reads it."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    token = SERVICE_ACCOUNT / "token"
    if not host or not port or not token.exists():
        return None
    server = f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"
    return Target(server=server, ca_file=str(SERVICE_ACCOUNT / "ca.crt"), token=token.read_text().strip())


def from_configuration(configuration: Any) -> Target:
    """The target of an official client's Configuration (its reader wrote certificate data to
    files already)."""
    token = configuration.get_api_key_with_prefix("authorization") if configuration.api_key else None
    return Target(
        server=configuration.host, ca_file=configuration.ssl_ca_cert, cert_file=configuration.cert_file,
        key_file=configuration.key_file, token=token.removeprefix("Bearer ").strip() if token else None,
        insecure=not configuration.verify_ssl,
    )
