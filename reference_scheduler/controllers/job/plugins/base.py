"""The hooks every job plugin has, and the helpers they share."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Callable, Sequence

Obj = dict[str, Any]


@dataclasses.dataclass
class Plugin:
    """`on_job_add` returns the objects the plugin owns (created once, kept in sync);
    `on_pod_create` edits a pod before it is created."""

    name: str
    args: Sequence[str]

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        return None

    def objects(self, job: Obj) -> list[Obj]:
        return []


def parse_flags(plugin: str, args: Sequence[str], define: Callable[[argparse.ArgumentParser], None]) -> argparse.Namespace:
    """Go-style `--flag=value` arguments. Unknown flags are ignored, as Volcano's flag sets do
    (they log the parse error and keep the defaults)."""
    parser = argparse.ArgumentParser(prog=plugin, add_help=False, allow_abbrev=False)
    define(parser)
    known, _ = parser.parse_known_args([a if a.startswith("--") or not a.startswith("-") else "-" + a for a in args])
    return known


def containers(pod: Obj, init: bool = True) -> list[Obj]:
    spec = pod["spec"]
    out = list(spec.get("containers") or [])
    if init:
        out += list(spec.get("initContainers") or [])
    return out


def add_env(container: Obj, *env: Obj) -> None:
    container.setdefault("env", []).extend(env)


def open_port(container: Obj, name: str, port: int) -> None:
    """Add a named container port unless the container already exposes that number."""
    ports = container.setdefault("ports", [])
    if not any(int(p.get("containerPort", -1)) == port for p in ports):
        ports.append({"name": name, "containerPort": port})


def task_by_name(job: Obj, name: str) -> Obj | None:
    tasks: list[Obj] = job["spec"].get("tasks") or []
    for task in tasks:
        if task.get("name") == name:
            return task
    return None


def pod_task(pod: Obj) -> str:
    return str((pod["metadata"].get("annotations") or {}).get("volcano.sh/task-spec", ""))


def pod_index(pod: Obj) -> int:
    return int((pod["metadata"].get("annotations") or {}).get("volcano.sh/task-index", "0"))


def host_of(job: Obj, task: Obj, index: int) -> str:
    """A task pod's DNS name: the template's hostname/subdomain when set, else
    `<job>-<task>-<i>.<job>` (what the svc plugin gives the pod)."""
    spec = (task.get("template") or {}).get("spec") or {}
    hostname = spec.get("hostname") or f"{job['metadata']['name']}-{task['name']}-{index}"
    subdomain = spec.get("subdomain") or job["metadata"]["name"]
    return f"{hostname}.{subdomain}"


def task_hosts(job: Obj, task: Obj) -> list[str]:
    """Every pod's host of a task; a template hostname names one host for all its pods."""
    if (task.get("template") or {}).get("spec", {}).get("hostname"):
        return [host_of(job, task, 0)] if int(task.get("replicas", 0)) > 0 else []
    return [host_of(job, task, i) for i in range(int(task.get("replicas", 0)))]


def owned(job: Obj, body: Obj) -> Obj:
    meta = body.setdefault("metadata", {})
    meta["namespace"] = job["metadata"]["namespace"]
    meta["ownerReferences"] = [
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job["metadata"]["name"], "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    ]
    return body


def job_selector(job: Obj) -> dict[str, str]:
    return {"volcano.sh/job-name": job["metadata"]["name"], "volcano.sh/job-namespace": job["metadata"]["namespace"]}
