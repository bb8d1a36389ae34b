"""The pytorch plugin: torch.distributed's rendezvous environment on every pod.

Upstream: pkg/controllers/job/plugins/distributed-framework/pytorch/pytorch.go.
"""

from __future__ import annotations

import argparse
import dataclasses

from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    add_env,
    host_of,
    open_port,
    parse_flags,
    pod_index,
    pod_task,
    task_by_name,
)

NAME = "pytorch"


@dataclasses.dataclass
class Pytorch(Plugin):
    """MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (master 0, worker i+1) and the port."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--master", default="master")
            p.add_argument("--worker", default="worker")
            p.add_argument("--port", type=int, default=23456)

        self.flags = parse_flags(self.name, self.args, define)

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        master = task_by_name(job, self.flags.master)
        if master is None:
            return
        task = pod_task(pod)
        world = sum(int(t.get("replicas", 0)) for t in job["spec"]["tasks"] if t["name"] in (self.flags.master, self.flags.worker))
        rank = None
        if task == self.flags.worker:
            rank = pod_index(pod) + 1
        elif task == self.flags.master:
            rank = 0
        for c in pod["spec"].get("containers") or []:
            open_port(c, "pytorchjob-port", self.flags.port)
            add_env(c, {"name": "MASTER_ADDR", "value": host_of(job, master, 0)}, {"name": "MASTER_PORT", "value": str(self.flags.port)}, {"name": "WORLD_SIZE", "value": str(world)})
            if rank is not None:
                add_env(c, {"name": "RANK", "value": str(rank)})
