"""A door to a real API server that answers some requests with a transient error first, as an API
server on a loaded machine does (etcd's "request timed out" as a 500, a 503 while it sheds load),
and passes every other request, watches included, through to the real server untouched.

The door speaks plain HTTP on 127.0.0.1 and writes a kubeconfig that points at it; it reaches
the real server with the credentials of the cluster's own kubeconfig.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import pathlib
import threading
from typing import Iterator

import kubernetes
import requests
import yaml

# Headers that describe one connection, not the message: never passed through.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host", "proxy-connection", "te", "upgrade"})


@dataclasses.dataclass
class Fault:
    """Answer the first `times` requests of `method` on exactly `path` with `status`."""

    method: str
    path: str
    status: int
    times: int
    message: str = "etcdserver: request timed out"


@dataclasses.dataclass
class FaultyDoor:
    upstream: kubernetes.client.Configuration
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


def _handler(door: FaultyDoor, session: requests.Session) -> type[http.server.BaseHTTPRequestHandler]:
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
                self.end_headers()
                self.wfile.write(payload)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            upstream = session.request(self.command, door.upstream.host + self.path, headers=headers, data=body, stream=True, timeout=(10, 600))
            with upstream:
                self.send_response(upstream.status_code)
                for key, value in upstream.headers.items():
                    if key.lower() not in HOP_BY_HOP:
                        self.send_header(key, value)
                self.end_headers()
                for chunk in upstream.raw.stream(65536, decode_content=False):
                    self.wfile.write(chunk)
                    self.wfile.flush()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: object) -> None:
            pass  # the test's output is for its assertions

    return Handler


def open_door(kubeconfig: pathlib.Path, context: str | None, faults: list[Fault], folder: pathlib.Path) -> Iterator[tuple[FaultyDoor, pathlib.Path]]:
    """Serve the door until the generator is closed; yields it and a kubeconfig that points at it
    (use with contextlib.contextmanager or as a fixture)."""
    upstream = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(kubeconfig), context=context, client_configuration=upstream)
    session = requests.Session()
    session.trust_env = False  # the environment's CA bundle or proxy are not the cluster's
    session.verify = upstream.ssl_ca_cert or upstream.verify_ssl
    if upstream.cert_file and upstream.key_file:
        session.cert = (upstream.cert_file, upstream.key_file)
    token = upstream.api_key.get("authorization")
    if token:
        session.headers["Authorization"] = token if " " in token else f"Bearer {token}"
    door = FaultyDoor(upstream, faults)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(door, session))
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
        session.close()
