"""`vck run --stress N`: N processes that keep a core busy for the whole run.

A CI runner or a laptop is never idle, and a scenario that passes only on an idle machine is
broken. Busy processes beside the run make a busy machine on demand, so a flake that needs one
shows up when it is hunted rather than on a user's first run (docs/flakes.md).

Each busy process spins in pure Python and checks, every few million iterations, that the run that
started it is still its parent: a run killed with `kill -9` leaves no spinner behind for long.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from typing import Iterator

# Spin, and leave as soon as the parent is gone (reparented: getppid() changes).
_SPIN = """
import os, sys
parent = int(sys.argv[1])
n = 0
while os.getppid() == parent:
    for _ in range(2_000_000):
        n += 1
"""


def start(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` busy processes, each in its own session (a Ctrl-C at the terminal reaches the run,
    which stops them itself) at normal priority: they compete with the run as other work would."""
    return [
        subprocess.Popen([sys.executable, "-c", _SPIN, str(os.getpid())], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(count)
    ]


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
    for proc in procs:
        proc.wait()


@contextlib.contextmanager
def busy(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` busy processes for the length of the block (none for 0); stopped however it ends."""
    procs = start(count) if count > 0 else []
    try:
        yield procs
    finally:
        stop(procs)
