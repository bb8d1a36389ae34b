"""The tensorflow plugin: TF_CONFIG, the cluster spec a distributed TensorFlow job reads.

Upstream: pkg/controllers/job/plugins/distributed-framework/tensorflow/tensorflow.go.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    add_env,
    host_of,
    parse_flags,
    pod_index,
    pod_task,
)

NAME = "tensorflow"


@dataclasses.dataclass
class Tensorflow(Plugin):
    """TF_CONFIG: the cluster (ps, worker, chief, evaluator host:port lists) and this pod's task."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--ps", default="ps")
            p.add_argument("--worker", default="worker")
            p.add_argument("--chief", default="chief")
            p.add_argument("--evaluator", default="evaluator")
            p.add_argument("--port", type=int, default=2222)

        self.flags = parse_flags(self.name, self.args, define)

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        tasks = job["spec"].get("tasks") or []
        if len(tasks) == 1 and int(tasks[0].get("replicas", 0)) == 1:
            return  # a single pod needs no cluster spec
        roles = {self.flags.ps: "ps", self.flags.worker: "worker", self.flags.chief: "chief", self.flags.evaluator: "evaluator"}
        cluster: dict[str, list[str]] = {}
        for task in tasks:
            role = roles.get(task["name"])
            if role is not None:
                cluster[role] = [f"{host_of(job, task, i)}:{self.flags.port}" for i in range(int(task.get("replicas", 0)))]
        ordered = {k: cluster[k] for k in ("ps", "worker", "chief", "evaluator") if cluster.get(k)}
        config = {"cluster": ordered, "task": {"type": roles.get(pod_task(pod), pod_task(pod)), "index": pod_index(pod)}}
        for c in pod["spec"].get("containers") or []:
            add_env(c, {"name": "TF_CONFIG", "value": json.dumps(config, separators=(",", ":"))})
