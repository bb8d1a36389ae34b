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
import re
import socket
from typing import Any, Iterator

from conformance.cluster import owners
from conformance.toolchain import cache

SESSION_FILE = "session.json"
# Written as soon as the session's process exists, before it is up: its owner (pid, start time).
STARTING_FILE = "starting.json"
LOG_FILE = "session.log"
DEFAULT_NAME = "dev"
# A request is answered (its first line) within this long, or the session is taken as stuck.
CONNECT_TIMEOUT_S = 5.0


class DevError(RuntimeError):
    """No session, a session that does not answer, or a request it refused; the message says what
    to do."""


def root(state_root: pathlib.Path | None = None) -> pathlib.Path:
    return (state_root or cache.state_dir()) / "dev"


# A session's name: its folder's, and part of its cluster's (`vck-dev-NAME`).
NAME = re.compile(r"^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$")


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise DevError(f"dev session name {name!r}: lower case letters, digits and '-', starting with a letter, at most 20 characters")
    return name


def folder(name: str, state_root: pathlib.Path | None = None) -> pathlib.Path:
    return root(state_root) / check_name(name)


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
        _write_private(where / SESSION_FILE, dataclasses.asdict(self))


def _write_private(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Whole (written aside, then renamed) and readable by this user only from the start: the
    session file holds the token."""
    partial = path.with_suffix(".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(data, indent=1) + "\n")
    os.replace(partial, path)


def mark_starting(where: pathlib.Path, owner: owners.Owner) -> None:
    _write_private(where / STARTING_FILE, dataclasses.asdict(owner))


def starting(where: pathlib.Path) -> owners.Owner | None:
    """The process of a session that was started in this folder (up or not yet)."""
    try:
        data = json.loads((where / STARTING_FILE).read_text())
        return owners.Owner(int(data["pid"]), int(data["started"]), str(data.get("command", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


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
