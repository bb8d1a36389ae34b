"""The mpi plugin: the ssh port on every pod, the workers' hosts for the master.

Upstream: pkg/controllers/job/plugins/distributed-framework/mpi/mpi.go.
"""

from __future__ import annotations

import argparse
import dataclasses

from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    add_env,
    containers,
    open_port,
    parse_flags,
    pod_task,
    task_by_name,
    task_hosts,
)

NAME = "mpi"


@dataclasses.dataclass
class Mpi(Plugin):
    """Opens the ssh port on every container; the master gets MPI_HOST, the workers' hosts."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--master", default="master")
            p.add_argument("--worker", default="worker")
            p.add_argument("--port", type=int, default=22)

        self.flags = parse_flags(self.name, self.args, define)

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        env = None
        if pod_task(pod) == self.flags.master:
            worker = task_by_name(job, self.flags.worker)
            if worker is None:
                return
            env = {"name": "MPI_HOST", "value": ",".join(task_hosts(job, worker))}
        for c in containers(pod):
            open_port(c, "mpijob-port", self.flags.port)
            if env is not None:
                add_env(c, dict(env))
