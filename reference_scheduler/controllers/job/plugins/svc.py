"""The svc plugin: pods that find each other by stable DNS names.

Upstream: pkg/controllers/job/plugins/svc/svc.go (flags and names: const.go).
"""

from __future__ import annotations

import argparse
import dataclasses

from reference_scheduler.controllers.job.plugins import keys
from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    add_env,
    containers,
    job_selector,
    owned,
    parse_flags,
    task_hosts,
)

NAME = "svc"


def _bool(value: str) -> bool:
    return value.lower() in ("1", "t", "true", "yes")


def _env_key(task: str) -> str:
    return task.replace("-", "_")


@dataclasses.dataclass
class Svc(Plugin):
    """Stable DNS names for every pod: hostname/subdomain, a headless Service, the hosts ConfigMap
    (files under /etc/volcano and VC_<TASK>_HOSTS / VC_<TASK>_NUM env), a NetworkPolicy."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--publish-not-ready-addresses", type=_bool, nargs="?", const=True, default=False)
            p.add_argument("--disable-network-policy", type=_bool, nargs="?", const=True, default=False)

        self.flags = parse_flags(self.name, self.args, define)

    def configmap_name(self, job: Obj) -> str:
        return f"{job['metadata']['name']}-svc"

    def hosts(self, job: Obj) -> dict[str, str]:
        data: dict[str, str] = {}
        for task in job["spec"].get("tasks") or []:
            hosts = task_hosts(job, task)
            key = _env_key(task["name"])
            data[f"{key}.host"] = "\n".join(hosts)
            data[f"VC_{key.upper()}_HOSTS"] = ",".join(hosts)
            data[f"VC_{key.upper()}_NUM"] = str(len(hosts))
        return data

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        spec = pod["spec"]
        if not spec.get("hostname"):
            spec["hostname"] = pod["metadata"]["name"]
        if not spec.get("subdomain"):
            spec["subdomain"] = job["metadata"]["name"]
        cm = self.configmap_name(job)
        env = []
        for task in job["spec"].get("tasks") or []:
            key = _env_key(task["name"]).upper()
            for name in (f"VC_{key}_HOSTS", f"VC_{key}_NUM"):
                env.append({"name": name, "valueFrom": {"configMapKeyRef": {"name": cm, "key": name}}})
        spec.setdefault("volumes", []).append({"name": cm, "configMap": {"name": cm}})
        for c in containers(pod):
            add_env(c, *env)
            c.setdefault("volumeMounts", []).append({"name": cm, "mountPath": keys.SVC_MOUNT_PATH})

    def objects(self, job: Obj) -> list[Obj]:
        name = job["metadata"]["name"]
        out = [
            owned(job, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": self.configmap_name(job)}, "data": self.hosts(job)}),
            owned(job, {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name},
                "spec": {"clusterIP": "None", "selector": job_selector(job), "publishNotReadyAddresses": self.flags.publish_not_ready_addresses},
            }),
        ]
        if not self.flags.disable_network_policy:
            out.append(owned(job, {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": name},
                "spec": {
                    "podSelector": {"matchLabels": job_selector(job)},
                    "ingress": [{"from": [{"podSelector": {"matchLabels": job_selector(job)}}]}],
                    "policyTypes": ["Ingress"],
                },
            }))
        return out
