"""A door to a real API server that answers some requests with a transient error first, as an API
server on a loaded machine does (etcd's "request timed out" as a 500, a 503 while it sheds load),
and passes every other request, watches included, through to the real server untouched.

The door speaks plain HTTP on 127.0.0.1 and writes a kubeconfig that points at it; it reaches
the real server with the credentials of the cluster's own kubeconfig.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import json
import pathlib
import threading
from typing import Iterator

import yaml

from conformance.bench import wire

# Headers that describe one connection, not the message: never passed through.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host", "proxy-connection", "te", "upgrade"})


@dataclasses.dataclass
class Fault:
    """Answer the first `times` requests of `method` on exactly `path` with `status` (and a
    Retry-After of `retry_after_s`, when given)."""

    method: str
    path: str
    status: int
    times: int
    message: str = "etcdserver: request timed out"
    retry_after_s: int | None = None


@dataclasses.dataclass
class FaultyDoor:
    upstream: wire.Endpoint
    faults: list[Fault]
    # Every request refused, as (method, path, status), in order.
    refused: list[tuple[str, str, int]] = dataclasses.field(default_factory=list)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def decide(self, method: str, path: str) -> Fault | None:
        """The fault this request meets, if any (counted: each fault answers `times` requests)."""
        with self._lock:
            for fault in self.faults:
                if fault.method == method and fault.path == path and fault.times > 0:
                    fault.times -= 1
                    self.refused.append((method, path, fault.status))
                    return fault
        return None


def _handler(door: FaultyDoor) -> type[http.server.BaseHTTPRequestHandler]:
    credentials = {k: v for k, v in door.upstream.headers if k == "Authorization"}

    class Handler(http.server.BaseHTTPRequestHandler):
        # HTTP/1.0: each answer ends with its connection, so a watch's body streams as it comes
        # without re-chunking it.
        protocol_version = "HTTP/1.0"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            fault = door.decide(self.command, self.path.split("?", 1)[0])
            if fault is not None:
                status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": fault.message, "code": fault.status}
                payload = json.dumps(status).encode()
                self.send_response(fault.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                if fault.retry_after_s is not None:
                    self.send_header("Retry-After", str(fault.retry_after_s))
                self.end_headers()
                self.wfile.write(payload)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            conn = door.upstream.connect()
            try:
                conn.request(self.command, self.path, body=body, headers={**headers, **credentials})
                upstream = conn.getresponse()
                self.send_response(upstream.status)
                for key, value in upstream.getheaders():
                    if key.lower() not in HOP_BY_HOP:
                        self.send_header(key, value)
                self.end_headers()
                # read1: what has come so far (a watch sends an event at a time).
                while chunk := upstream.read1(65536):
                    self.wfile.write(chunk)
                    self.wfile.flush()
            finally:
                conn.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: object) -> None:
            pass  # the test's output is for its assertions

    return Handler


@contextlib.contextmanager
def open_door(kubeconfig: pathlib.Path, context: str | None, faults: list[Fault], folder: pathlib.Path) -> Iterator[tuple[FaultyDoor, pathlib.Path]]:
    """Serve the door for the block: it, and a kubeconfig that points at it."""
    door = FaultyDoor(wire.Endpoint.from_kubeconfig(kubeconfig, context), faults)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(door))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "door",
        "clusters": [{"name": "door", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "door", "user": {}}],
        "contexts": [{"name": "door", "context": {"cluster": "door", "user": "door"}}],
    }
    path = folder / "door-kubeconfig.yaml"
    path.write_text(yaml.safe_dump(config))
    try:
        yield door, path
    finally:
        server.shutdown()
        server.server_close()
