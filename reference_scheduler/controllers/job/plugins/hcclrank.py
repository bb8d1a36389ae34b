"""The hcclrank plugin: each pod's rank in an Ascend HCCL job, as a pod annotation.

Upstream: pkg/controllers/job/plugins/distributed-framework/hcclrank/hcclrank.go.
"""

from __future__ import annotations

import argparse
import dataclasses

from reference_scheduler.controllers.job.plugins import keys
from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    parse_flags,
    pod_index,
    pod_task,
    task_by_name,
)

NAME = "hcclrank"


@dataclasses.dataclass
class Hcclrank(Plugin):
    """Annotation `hccl/rankIndex`: a container's RANK env if set, else master i, worker masters+i."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--master", default="master")
            p.add_argument("--worker", default="worker")

        self.flags = parse_flags(self.name, self.args, define)

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        annotations = pod["metadata"].setdefault("annotations", {})
        if annotations.get(keys.HCCL_RANK):
            return
        for c in pod["spec"].get("containers") or []:
            for env in c.get("env") or []:
                if env.get("name") == "RANK" and env.get("value"):
                    annotations[keys.HCCL_RANK] = env["value"]
                    return
        task = pod_task(pod)
        if task == self.flags.master:
            annotations[keys.HCCL_RANK] = str(pod_index(pod))
        elif task == self.flags.worker:
            master = task_by_name(job, self.flags.master)
            annotations[keys.HCCL_RANK] = str(int(master.get("replicas", 0)) + pod_index(pod) if master else pod_index(pod))
