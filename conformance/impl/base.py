"""The protocol every implementation adapter follows."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import tempfile
from typing import Any, Collection, Mapping, Protocol, runtime_checkable

from conformance.cluster import base

# Volcano's default scheduler configuration (its helm chart's volcano-scheduler.conf), used when a
# scenario does not give one. Upstream: installer/helm/chart/volcano/config/volcano-scheduler.conf.
DEFAULT_SCHEDULER_CONF: Mapping[str, Any] = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang", "enablePreemptable": False}, {"name": "conformance"}]},
        {"plugins": [{"name": "overcommit"}, {"name": "drf", "enablePreemptable": False}, {"name": "predicates"}, {"name": "proportion"}, {"name": "nodeorder"}, {"name": "binpack"}]},
    ],
}


# Set by the pytest plugin in each parallel worker of a run, and only there: the worker's id, for an
# adapter that keeps files per worker (the reference's VCK_REFERENCE_WORKDIR logs).
WORKER_ENV = "VCK_WORKER"


@dataclasses.dataclass
class Workdir:
    """Where an adapter keeps its processes' logs, confs and certificates: the folder the caller
    chose, or `ENV` (a folder per parallel worker under it) where a caller or a test reads the
    logs, or else a folder in the cluster's own state (0700, removed with the cluster). Only a
    cluster the kit keeps no folder for (existing) gets a private temporary one, removed by the
    adapter's `release()` once its logs are copied (session.Session.close). Nothing is created before `for_cluster`: a run refused at its start leaves nothing."""

    env: str
    role: str
    chosen: pathlib.Path | None = None
    _temporary: pathlib.Path | None = None

    def __post_init__(self) -> None:
        env_dir = os.environ.get(self.env)
        if self.chosen is None and env_dir:
            worker = os.environ.get(WORKER_ENV)
            self.chosen = pathlib.Path(env_dir) / worker if worker else pathlib.Path(env_dir)

    def for_cluster(self, cluster: base.ClusterHandle) -> pathlib.Path:
        if self.chosen is not None:
            folder = self.chosen
        elif cluster.state_dir is not None:
            folder = cluster.state_dir / self.role
        else:
            if self._temporary is None:
                self._temporary = pathlib.Path(tempfile.mkdtemp(prefix=f"vck-{self.role}-"))
            folder = self._temporary
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return folder

    def release(self) -> None:
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None


class ImplementationError(RuntimeError):
    """The implementation could not be started or stopped (an error, not a failed scenario)."""


class Implementation(Protocol):
    @property
    def name(self) -> str: ...

    def capabilities(self) -> frozenset[str]:
        """What it claims: `action:enqueue`, `plugin:gang`, `jobplugin:svc`, `admission:job`, ..."""
        ...

    def ensure(self, cluster: base.ClusterHandle, scheduler_conf: Mapping[str, Any] | None) -> None:
        """Be running against `cluster` with this scheduler configuration (None: the default),
        restarting only what must change."""
        ...

    def health(self) -> str | None:
        """None while healthy; otherwise what went wrong (a process exited, with its last log lines)."""
        ...

    def stop(self) -> None:
        ...

    def versions(self) -> dict[str, str]:
        ...

    def volcano_release(self) -> str | None:
        """The Volcano release it is, or models (`v1.13.3`); None when unknown. A scenario that
        names releases (`volcano: '>=1.14'`) is not applicable outside them."""
        ...


# The parts of an implementation a Staged adapter can hold back.
SCHEDULER = "scheduler"
CONTROLLER = "controller"


@runtime_checkable
class Staged(Protocol):
    """An implementation whose scheduler (and controller) can be held stopped while a workload is
    created, then started: what `vck bench scheduler` times from (the adapters that run the
    implementation as processes here: reference and volcano)."""

    def hold(self, parts: Collection[str]) -> None:
        """Stop these running parts (SCHEDULER, CONTROLLER) of an implementation `ensure` started;
        they stay stopped until resume()."""
        ...

    def resume(self) -> None:
        """Start the held parts side by side with the arguments they had; return once each says
        it is ready."""
        ...
