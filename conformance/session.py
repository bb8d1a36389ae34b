"""One process's share of a run: its cluster and implementation, started on first use and stopped
once at the end. pytest's plugin and fixtures both use it, so a process never runs two clusters."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import time
from typing import Any, Callable, Mapping

from conformance import config
from conformance.cluster import base, nodes, owners
from conformance.impl import base as impl_base
from conformance.impl import registry as impl_registry
from conformance.runner import context


@dataclasses.dataclass
class SessionOptions:
    """A process's share of a run: the run's configuration (whole, as it came) and what is this
    process's own."""

    run: config.RunConfig = dataclasses.field(default_factory=config.RunConfig)
    worker: str = "main"
    # Where the implementation's logs are kept when the session ends (the run's report folder):
    # the cluster's state, where they were written, goes with the cluster.
    logs_dir: pathlib.Path | None = None
    # Where lines about slow work (a cluster starting) go; None: stderr.
    progress: Callable[[str], None] | None = None
    # For the kit's own tests' session cluster: its name (default: one per process) and nodes.
    cluster_name: str | None = None
    nodes: str | None = None


class Session:
    def __init__(self, options: SessionOptions) -> None:
        self.options = options
        self._backend: base.ClusterBackend | None = None
        self._cluster: base.ClusterHandle | None = None
        self._implementation: impl_base.Implementation | None = None
        self._context: context.RunContext | None = None

    def cluster(self) -> base.ClusterHandle:
        if self._cluster is None:
            opts = self.options
            self._backend = opts.run.backend.backend(opts.progress, owner=owners.current())
            name = opts.cluster_name or f"vck-{opts.worker}-{os.getpid()}"
            self._cluster = self._backend.up(name, nodes.parse(opts.nodes))
        return self._cluster

    def implementation(self) -> impl_base.Implementation:
        if self._implementation is None:
            self._implementation = impl_registry.implementation(self.options.run.implementation)
        return self._implementation

    def prepare(self, scheduler_conf: Mapping[str, Any] | None) -> dict[str, float]:
        """Start what the process's first scenario needs (the cluster, then the implementation
        with that scenario's conf) and say how long each took, by `<worker> cluster` and
        `<worker> implementation`: the kit's setup, never charged to a scenario. Empty when both
        already run. A failure is left for the scenario to meet again and report as an error."""
        spent: dict[str, float] = {}
        worker = self.options.worker
        if self._cluster is None:
            began = time.monotonic()
            self.cluster()
            spent[f"{worker} cluster"] = round(time.monotonic() - began, 1)
        if self._context is None:
            began = time.monotonic()
            ctx = self.context()
            ctx.implementation.ensure(ctx.cluster, scheduler_conf)
            spent[f"{worker} implementation"] = round(time.monotonic() - began, 1)
        return spent

    def context(self) -> context.RunContext:
        if self._context is None:
            self._context = context.RunContext(
                self.cluster(), self.implementation(), time_scale=self.options.run.time_scale, images=self.options.run.backend.images,
            )
        return self._context

    def close(self) -> None:
        try:
            if self._implementation is not None:
                self._implementation.stop()
                self._keep_logs(self._implementation)
                # Only now may a private folder holding the logs go (an existing cluster's).
                release = getattr(self._implementation, "release", None)
                if release is not None:
                    release()
        finally:
            if self._cluster is not None and self._backend is not None and self._cluster.owned and not self._cluster.reused:
                self._backend.down(self._cluster.name)
            self._cluster = None
            self._context = None

    def _keep_logs(self, implementation: impl_base.Implementation) -> None:
        logs = getattr(implementation, "logs", None)
        if self.options.logs_dir is None or logs is None:
            return
        target = self.options.logs_dir / self.options.worker
        for name, path in logs().items():
            if path.exists():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target / f"{name.replace(' ', '-')}.log")
