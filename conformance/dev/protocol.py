"""How `vck run --dev` and `vck dev ...` talk to a dev session: its folder, the file that says where
it listens, and one JSON object per line over a TCP connection on 127.0.0.1.

The session writes `session.json` (mode 0600) once its cluster and implementation are up: its
process (pid and start time, as an owner is known), its port and a random token that every request
must carry (another user of the machine cannot drive it), and what it runs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import socket
from typing import Any, Iterator

from conformance.cluster import owners
from conformance.toolchain import cache

SESSION_FILE = "session.json"
LOG_FILE = "session.log"
DEFAULT_NAME = "dev"
# A request is answered (its first line) within this long, or the session is taken as stuck.
CONNECT_TIMEOUT_S = 5.0


class DevError(RuntimeError):
    """No session, a session that does not answer, or a request it refused; the message says what
    to do."""


def root(state_root: pathlib.Path | None = None) -> pathlib.Path:
    return (state_root or cache.state_dir()) / "dev"


def folder(name: str, state_root: pathlib.Path | None = None) -> pathlib.Path:
    return root(state_root) / name


@dataclasses.dataclass(frozen=True)
class SessionInfo:
    name: str
    pid: int
    # The process's start time (owners.Owner.started): a reused pid is not the session.
    started: int
    port: int
    token: str
    implementation: str
    backend: str
    cluster: str
    kubeconfig: str
    kubernetes: str
    # When the session came up (seconds since the epoch).
    since: float

    def owner(self) -> owners.Owner:
        return owners.Owner(self.pid, self.started, "vck dev up")

    def alive(self) -> bool:
        return self.owner().alive()

    def write(self, where: pathlib.Path) -> None:
        path = where / SESSION_FILE
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(dataclasses.asdict(self), indent=1) + "\n")
        partial.chmod(0o600)
        os.replace(partial, path)


def read(where: pathlib.Path) -> SessionInfo | None:
    """The session the folder describes; None while it starts, or when the file is unreadable."""
    try:
        data = json.loads((where / SESSION_FILE).read_text())
        return SessionInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall((json.dumps(message) + "\n").encode())


def lines(conn: socket.socket) -> Iterator[dict[str, Any]]:
    """The messages the other side sends, until it closes the connection."""
    with conn.makefile("r", encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                yield json.loads(line)


def request(info: SessionInfo, message: dict[str, Any], timeout_s: float | None = None) -> Iterator[dict[str, Any]]:
    """Send one request to the session and yield what it answers, until it closes the connection.
    `timeout_s`: how long any one answer may take (None: as long as a run takes)."""
    try:
        conn = socket.create_connection(("127.0.0.1", info.port), timeout=CONNECT_TIMEOUT_S)
    except OSError as err:
        raise DevError(f"dev session {info.name} (pid {info.pid}) does not answer on port {info.port}: {err}") from err
    with conn:
        conn.settimeout(timeout_s)
        send(conn, {**message, "token": info.token})
        yield from lines(conn)
