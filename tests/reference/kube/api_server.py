"""An API server frozen with SIGSTOP, for the clients' timeout tests (test_client.py,
test_rest.py): its connections stay open and nothing answers, as with a partition."""

from __future__ import annotations

import contextlib
import os
import signal
from typing import Iterator

from conformance.cluster import processes
from tests.clusters import OwnCluster

GIVE_UP_WITHIN_S = 60


@contextlib.contextmanager
def frozen_api_server(cluster: OwnCluster) -> Iterator[None]:
    [server] = [p for p in processes.under(cluster.state_dir) if p.name == "kube-apiserver"]
    os.kill(server.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.pid, signal.SIGCONT)
