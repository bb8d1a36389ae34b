"""The ray plugin: a Ray cluster of a head task and a worker task.

Upstream: pkg/controllers/job/plugins/distributed-framework/ray/ray.go.
"""

from __future__ import annotations

import argparse
import dataclasses

from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    host_of,
    job_selector,
    open_port,
    owned,
    parse_flags,
    pod_task,
    task_by_name,
)

NAME = "ray"


@dataclasses.dataclass
class Ray(Plugin):
    """A Ray cluster from a head task and a worker task, per the documented contract (seed
    004_25106c9ff6084b21.txt): the head container runs `ray start --head --block ...` and opens
    gcs/dashboard/client-server; each worker runs `ray start --block --address=<head>:<port>`
    where <head> is the head pod's real hostname.subdomain; a container that brings its own
    command keeps it; a ClusterIP Service `<job>-head-svc` selects the head."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--head", default="head")
            p.add_argument("--headContainer", default="head")
            p.add_argument("--worker", default="worker")
            p.add_argument("--workerContainer", default="worker")
            p.add_argument("--port", type=int, default=6379)
            p.add_argument("--dashboardPort", type=int, default=8265)
            p.add_argument("--clientPort", type=int, default=10001)

        self.flags = parse_flags(self.name, self.args, define)

    def head_command(self) -> list[str]:
        f = self.flags
        return ["sh", "-c", f"ray start --head --block --dashboard-host=0.0.0.0 --port={f.port} --dashboard-port={f.dashboardPort} --ray-client-server-port={f.clientPort}"]

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        f = self.flags
        head = task_by_name(job, f.head)
        if head is None:
            raise ValueError(f"job {job['metadata']['name']} has no head task {f.head!r} (the ray plugin needs one)")
        task = pod_task(pod)
        for c in pod["spec"].get("containers") or []:
            if task == f.head and c.get("name") == f.headContainer:
                for name, port in (("gcs", f.port), ("dashboard", f.dashboardPort), ("client-server", f.clientPort)):
                    open_port(c, name, port)
                if not c.get("command"):
                    c["command"] = self.head_command()
            if task == f.worker and c.get("name") == f.workerContainer and not c.get("command"):
                c["command"] = ["sh", "-c", f"ray start --block --address={host_of(job, head, 0)}:{f.port}"]

    def objects(self, job: Obj) -> list[Obj]:
        f = self.flags
        selector = {**job_selector(job), "volcano.sh/task-spec": f.head}
        ports = [
            {"name": "gcs", "port": f.port, "targetPort": "gcs", "protocol": "TCP"},
            {"name": "dashboard", "port": f.dashboardPort, "targetPort": "dashboard", "protocol": "TCP"},
            {"name": "client-server", "port": f.clientPort, "targetPort": "client-server", "protocol": "TCP"},
        ]
        return [owned(job, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{job['metadata']['name']}-head-svc"}, "spec": {"selector": selector, "ports": ports}})]
