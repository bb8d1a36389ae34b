"""A lean HTTPS client for the bench's own requests: JSON bytes over keep-alive HTTP/1.1
connections, one per worker thread, no models.

The official client spends about 5-12 ms of CPU per object (building and reading models), which
made the old bench measure its own creation rate. This one spends about 0.3 ms: measured on the
2-core machine against a Go client (net/http, 32 connections), it posts Bindings as fast (590-600
a second both) and creates pods 10-15% slower (570-620 against 650-710 a second), the API server
being the limit either way. HTTP/2 over one connection, client-go's default, was slower for both
(375 binds a second from Go).
"""

from __future__ import annotations

import collections
import dataclasses
import http.client
import pathlib
import queue
import ssl
import threading
import time
import urllib.parse
from typing import Callable, Iterable, Sequence

from conformance.cluster import kube

# Connections of the worker pool: enough to keep the API server's two cores busy while each
# request waits on etcd (measured: 16 and 32 give the same rates; 8 is slower).
WORKERS = 32
# (connect, read) seconds; the API server's own request timeout is 60 s.
TIMEOUT_S = 90.0
JSON = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "vck-bench"}


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes | None = None
    # A gang's requests share a group: steady arrival releases a whole group at once.
    group: int = 0


@dataclasses.dataclass(frozen=True)
class Answer:
    request: Request
    status: int
    # The answer's body when the status is an error (what the API server said), else empty.
    error: str = ""

    @property
    def ok(self) -> bool:
        # 409 on a create sent again after a dropped connection: the first one got through.
        return 200 <= self.status < 300 or (self.status == 409 and self.request.method == "POST")


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where the API server is and how to authenticate, read from a kubeconfig."""

    host: str
    port: int
    context: ssl.SSLContext
    headers: tuple[tuple[str, str], ...]

    @classmethod
    def from_kubeconfig(cls, kubeconfig: pathlib.Path, context: str | None = None) -> Endpoint:
        configuration = kube.client(kubeconfig, context).configuration
        url = urllib.parse.urlsplit(configuration.host)
        ssl_context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
        if not configuration.verify_ssl:
            ssl_context.check_hostname = False
            ssl_context.verify_mode = ssl.CERT_NONE
        if configuration.cert_file:
            ssl_context.load_cert_chain(configuration.cert_file, configuration.key_file)
        headers = dict(JSON)
        token = (configuration.api_key or {}).get("authorization")
        if token:
            headers["Authorization"] = token
        return cls(url.hostname or "127.0.0.1", url.port or 443, ssl_context, tuple(headers.items()))

    def connect(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=TIMEOUT_S)


def send(endpoint: Endpoint, conn: http.client.HTTPSConnection, request: Request, headers: dict[str, str] | None = None) -> tuple[http.client.HTTPSConnection, Answer]:
    """One request on `conn` (`headers` over the endpoint's own); a dropped connection is opened
    again and the request sent once more. Returns the connection to use next."""
    sent = {**dict(endpoint.headers), **(headers or {})}
    for attempt in (1, 2):
        try:
            conn.request(request.method, request.path, body=request.body, headers=sent)
            resp = conn.getresponse()
            data = resp.read()
            error = "" if resp.status < 300 else data[:500].decode(errors="replace")
            return conn, Answer(request, resp.status, error)
        except (http.client.HTTPException, OSError) as err:
            conn.close()
            conn = endpoint.connect()
            if attempt == 2:
                return conn, Answer(request, 0, f"{err.__class__.__name__}: {err}")
    raise AssertionError("unreachable")


def send_all(endpoint: Endpoint, requests: Iterable[Request], workers: int = WORKERS, release: Callable[[int], float] | None = None, headers: dict[str, str] | None = None) -> list[Answer]:
    """Every request, on `workers` connections at once; answers in the order they came.

    `release(group)`, when given, is the time.monotonic() moment a group's requests may start
    (steady arrival): a feeder hands each group to the workers at its moment, in order."""
    todo: queue.Queue[Request | None] = queue.Queue()
    answers: collections.deque[Answer] = collections.deque()

    def work() -> None:
        conn = endpoint.connect()
        try:
            while (request := todo.get()) is not None:
                conn, answer = send(endpoint, conn, request, headers)
                answers.append(answer)
        finally:
            conn.close()

    threads = [threading.Thread(target=work, name=f"bench-wire-{i}", daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    try:
        for request in requests:
            if release is not None:
                wait = release(request.group) - time.monotonic()
                if wait > 0:
                    time.sleep(wait)  # steady arrival: hold the next group until its moment
            todo.put(request)
    finally:
        for _ in threads:
            todo.put(None)
        for thread in threads:
            thread.join()
    return list(answers)


def failures(answers: Sequence[Answer]) -> list[Answer]:
    return [a for a in answers if not a.ok]


def api_path(group: str, version: str, plural: str, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
    """The REST path of a collection, an object or a subresource (core when `group` is empty)."""
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    parts = [base]
    if namespace is not None:
        parts.append(f"namespaces/{namespace}")
    parts.append(plural)
    if name is not None:
        parts.append(name)
    if sub is not None:
        parts.append(sub)
    return "/".join(parts)
