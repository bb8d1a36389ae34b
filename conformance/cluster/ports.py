"""Listening ports for the processes the kit starts (kwok's components, Volcano's webhook).

A port the kernel hands out for `bind(0)` comes from the ephemeral range, the same range every
outgoing connection on the machine draws from: between the moment it is chosen and the moment the
component binds it, any client connection (the kit's own, the API server's to etcd) may take it,
and a cluster started beside another may be given the same one. Seen as kwok's "bind: address
already in use" and a node that never became Ready.

So ports come from below the ephemeral range, where no outgoing connection lands, and every kit
process on the machine reserves them in one registry file (under a lock) for long enough to bind
them; after that a port in use is seen by the bind check itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import pathlib
import random
import socket
import time
from typing import Iterator

from conformance.toolchain import cache

# How long a reserved port is kept from others: a cluster binds its ports well within this.
RESERVATION_S = 600.0
# The lowest port handed out: well above the well-known and registered services people run.
LOWEST = 20000
EPHEMERAL_RANGE = pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_low() -> int:
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _bindable(port: int) -> bool:
    """Free on every address (components listen on 0.0.0.0 or 127.0.0.1)."""
    for host in ("0.0.0.0", "127.0.0.1"):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


@contextlib.contextmanager
def _registry(path: pathlib.Path) -> Iterator[dict[str, float]]:
    """The reservations (port -> until, wall clock), read and written back under an exclusive lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            held = json.loads(path.read_text()) if path.exists() else {}
        except ValueError:
            held = {}
        now = time.time()
        live = {port: until for port, until in held.items() if until > now}
        yield live
        path.write_text(json.dumps(live))


def reserve(count: int, registry: pathlib.Path | None = None, rng: random.Random | None = None) -> list[int]:
    """`count` distinct ports that are free now and reserved from every other kit process for
    RESERVATION_S. Falls back to kernel-chosen ports when the range below the ephemeral one is too
    small to choose from (an unusual ip_local_port_range)."""
    low, high = LOWEST, _ephemeral_low() - 1
    if high - low < 1000:
        return _kernel_ports(count)
    chooser = rng or random.SystemRandom()
    with _registry(registry or cache.cache_dir() / "ports.json") as held:
        chosen: list[int] = []
        for _ in range(50 * count):
            port = chooser.randint(low, high)
            if str(port) in held or port in chosen or not _bindable(port):
                continue
            chosen.append(port)
            if len(chosen) == count:
                break
        else:
            raise OSError(f"no {count} free ports found between {low} and {high}")
        until = time.time() + RESERVATION_S
        held.update({str(port): until for port in chosen})
    return chosen


def _kernel_ports(count: int) -> list[int]:
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
        return ports
