"""The protocol every implementation adapter follows."""

from __future__ import annotations

from typing import Any, Mapping, Protocol

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


class ImplementationError(RuntimeError):
    """The implementation could not be started or stopped (an error, not a failed scenario)."""


class Implementation(Protocol):
    name: str

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
