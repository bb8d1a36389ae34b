"""A lean REST path to the API server for lists, watches and the hot writes (binds, events,
status patches): JSON bytes over keep-alive HTTP/1.1 connections, one per thread, no models.

The official client spends about 5 ms of CPU per request building and reading its models, under
the interpreter lock every thread shares; a scheduler that binds hundreds of pods a second cannot
afford that. This path spends about 0.3 ms: it sends the body as bytes and reads the answer as
JSON only when the caller wants it. Connections go to the server and with the credentials
kube/kubeconfig.py reads (those the official client would use), with the same bounds on every
call, so a server that never answers fails the one request instead of stalling a worker.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import ssl
import sys
import threading
import time
import urllib.parse
from typing import Any, Iterator

from reference_scheduler.kube import kubeconfig

# (connect, read) seconds for every call that is not a watch (the official client's bound too,
# kube/client.py). The client's own default is to wait forever: a connection that hangs without
# being closed (a partitioned node, a stopped API server) would stall a scheduling cycle or a
# reconcile loop for good. The read bound is longer than the API server's own request timeout
# (60 s), so a slow but live server still answers first.
REQUEST_TIMEOUT_S: tuple[float, float] = (10.0, 90.0)
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
# How much of a streamed answer is read at a time.
STREAM_READ = 1 << 16
# Errors that mean a kept-alive connection was closed by the server between two requests (over
# TLS the write itself may fail, with an EOF): the request is sent again once on a fresh one.
STALE = (http.client.RemoteDisconnected, http.client.CannotSendRequest, BrokenPipeError, ConnectionResetError, ConnectionAbortedError, ssl.SSLEOFError, ssl.SSLZeroReturnError)
# A connection idle this long is closed and opened again rather than reused: the API server
# closes idle ones after 90 s (its http.Server IdleTimeout), and a scheduler's bind threads can
# idle for minutes between bursts.
IDLE_S = 60.0


def user_agent() -> str:
    """This process's name for the API server (its audit log, its metrics): the module it runs
    (`reference_scheduler.scheduler`), as vc-scheduler names itself by its binary."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = spec.name.removesuffix(".__main__") if spec is not None and spec.name else "reference_scheduler"
    return f"{name}/v0 (python)"


class ApiError(Exception):
    """The API server answered with an error status (its Status body in `body`)."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body.decode(errors="replace")
        try:
            self.reason = json.loads(body).get("message") or self.body[:200]
        except ValueError:
            self.reason = self.body[:200]
        super().__init__(f"HTTP {status}: {self.reason}")


@dataclasses.dataclass(frozen=True)
class _Target:
    host: str
    port: int
    context: ssl.SSLContext
    headers: tuple[tuple[str, str], ...]


class Rest:
    def __init__(self, target: kubeconfig.Target, user_agent: str, timeout_s: tuple[float, float]) -> None:
        url = urllib.parse.urlsplit(target.server)
        context = ssl.create_default_context(cafile=target.ca_file)
        if target.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if target.cert_file:
            context.load_cert_chain(target.cert_file, target.key_file)
        headers = {"Accept": JSON, "User-Agent": user_agent}
        if target.token:
            headers["Authorization"] = f"Bearer {target.token}"
        self._target = _Target(url.hostname or "127.0.0.1", url.port or 443, context, tuple(headers.items()))
        self.connect_s, self.read_s = timeout_s
        self._local = threading.local()

    def _connection(self) -> tuple[http.client.HTTPSConnection, bool]:
        """This thread's connection, and whether it is new."""
        conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
        now = time.monotonic()
        if conn is not None and now - self._local.used < IDLE_S:
            self._local.used = now
            return conn, False
        if conn is not None:
            conn.close()
        self._local.used = now
        conn = http.client.HTTPSConnection(self._target.host, self._target.port, context=self._target.context, timeout=self.connect_s)
        conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(self.read_s)
        self._local.conn = conn
        return conn, True

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
        self._local.conn = None

    def request(self, method: str, path: str, body: bytes | None = None, content_type: str = JSON) -> bytes:
        """The answer's body; ApiError for an error status, OSError or HTTPException when the
        connection fails."""
        headers = dict(self._target.headers)
        if body is not None:
            headers["Content-Type"] = content_type
        while True:
            conn, fresh = self._connection()
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            except STALE:
                self._drop()
                if fresh:
                    raise
                continue  # the server closed a kept-alive connection: once more on a new one
            except (http.client.HTTPException, OSError):
                self._drop()
                raise
            if resp.status >= 300:
                raise ApiError(resp.status, data)
            return data

    def lines(self, path: str) -> Iterator[bytes]:
        """A streamed answer (a watch) line by line, on a connection of its own that is closed
        when the stream ends or the caller stops reading."""
        conn = http.client.HTTPSConnection(self._target.host, self._target.port, context=self._target.context, timeout=self.connect_s)
        try:
            conn.connect()
            assert conn.sock is not None
            # A watch is quiet for as long as nothing changes; the server ends it by its own
            # timeoutSeconds, well within this bound.
            conn.sock.settimeout(self.read_s)
            conn.request("GET", path, headers=dict(self._target.headers))
            resp = conn.getresponse()
            if resp.status >= 300:
                raise ApiError(resp.status, resp.read())
            pending = b""
            while chunk := resp.read1(STREAM_READ):
                parts = (pending + chunk).split(b"\n")
                pending = parts.pop()
                yield from (part for part in parts if part)
        finally:
            conn.close()

    def post(self, path: str, body: dict[str, Any]) -> bytes:
        return self.request("POST", path, json.dumps(body, separators=(",", ":")).encode())

    def merge_patch(self, path: str, patch: dict[str, Any]) -> dict[str, Any]:
        """Merge-patch the object at `path`; the object as the API server now has it."""
        answer: dict[str, Any] = json.loads(self.request("PATCH", path, json.dumps(patch, separators=(",", ":")).encode(), MERGE_PATCH))
        return answer


def path(group: str, version: str, plural: str, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
    """The REST path of a collection, an object or a subresource (the core group when `group`
    is empty)."""
    parts = [f"/api/{version}" if not group else f"/apis/{group}/{version}"]
    if namespace:
        parts.append(f"namespaces/{urllib.parse.quote(namespace)}")
    parts.append(plural)
    if name is not None:
        parts.append(urllib.parse.quote(name))
    if sub is not None:
        parts.append(sub)
    return "/".join(parts)
