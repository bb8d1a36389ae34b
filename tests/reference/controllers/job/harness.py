"""Builders and fakes for the job controller's in-memory cases: small dict-built Jobs and pods,
an `Ops` recorder for the phase machine, and a view of a pod that keeps only what job plugins
change. No cluster and no API server: the scenarios prove the same behavior end to end."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference_scheduler.controllers.job import defaults, pods, states

NAMESPACE = "ns"
JOB_UID = "uid-1"


Container = str | dict[str, Any]


def _container(c: Container) -> dict[str, Any]:
    return {"name": c, "image": "busybox"} if isinstance(c, str) else {"image": "busybox", **c}


def task(name: str, replicas: int = 1, containers: tuple[Container, ...] = ("main",), min_available: int | None = None, policies: list[dict[str, Any]] | None = None, annotations: dict[str, str] | None = None, **pod_spec: Any) -> dict[str, Any]:
    """A task whose template runs `containers` (a name: an image and nothing else; a dict: that
    container) plus any template spec fields (`hostname`, `subdomain`, `initContainers`...)."""
    template: dict[str, Any] = {"spec": {"containers": [_container(c) for c in containers], **pod_spec}}
    if annotations:
        template["metadata"] = {"annotations": dict(annotations)}
    out: dict[str, Any] = {"name": name, "replicas": replicas, "template": template}
    if min_available is not None:
        out["minAvailable"] = min_available
    if policies is not None:
        out["policies"] = policies
    return out


def job(*tasks: dict[str, Any], name: str = "tj", plugins: dict[str, list[str]] | None = None, **spec: Any) -> dict[str, Any]:
    """A Job as the controller sees it: with Volcano's defaults applied (queue, minAvailable...).
    The defaults add svc (and ssh) where a framework plugin needs it, as the webhook does; a case
    about one plugin alone builds its plugins itself (`plugins_of`)."""
    body: dict[str, Any] = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": JOB_UID},
        "spec": {"tasks": [dict(t) for t in tasks], **spec},
    }
    if plugins is not None:
        body["spec"]["plugins"] = plugins
    return defaults.with_defaults(body)


def pod_of(job_: dict[str, Any], task_name: str, index: int = 0) -> dict[str, Any]:
    """The pod the controller would create for a task's index, before any plugin runs."""
    spec_task = next(t for t in job_["spec"]["tasks"] if t["name"] == task_name)
    return pods.make_pod(job_, spec_task, index, version=0, retry_count=0)


def env_of(container: dict[str, Any]) -> dict[str, str]:
    """A container's env as name -> value; a value from a ConfigMap reads `configmap:<name>/<key>`."""
    out: dict[str, str] = {}
    for var in container.get("env") or []:
        assert var["name"] not in out, f"{var['name']} set twice on container {container['name']}"
        ref = (var.get("valueFrom") or {}).get("configMapKeyRef")
        out[var["name"]] = f"configmap:{ref['name']}/{ref['key']}" if ref else var["value"]
    return out


def container(pod: dict[str, Any], name: str, init: bool = False) -> dict[str, Any]:
    return next(c for c in pod["spec"].get("initContainers" if init else "containers") or [] if c["name"] == name)


# --- the phase machine's operations, recorded ------------------------------------------------------
@dataclasses.dataclass
class Call:
    """One operation the phase machine asked for; `update` is the status function it handed
    over (None: the phase stays as it is)."""

    op: str
    retain: str | None = None
    task: str | None = None
    pod: str | None = None
    update: states.UpdateFn | None = None


@dataclasses.dataclass
class OpsRecorder:
    """A stand-in for the controller's sync (states.Ops) that only records what it is asked."""

    job: dict[str, Any]
    calls: list[Call] = dataclasses.field(default_factory=list)

    def kill_job(self, retain: str, update: states.UpdateFn | None) -> None:
        self.calls.append(Call("kill_job", retain=retain, update=update))

    def kill_target(self, task: str, pod: str, update: states.UpdateFn | None) -> None:
        self.calls.append(Call("kill_target", task=task, pod=pod, update=update))

    def sync_job(self, update: states.UpdateFn | None) -> None:
        self.calls.append(Call("sync_job", update=update))

    def only_call(self) -> Call:
        assert len(self.calls) == 1, f"the phase machine made {len(self.calls)} calls: {self.calls}"
        return self.calls[0]


def status(phase: str, retry: int = 0, min_available: int = 0, **counts: Any) -> dict[str, Any]:
    """A Job status as a sync hands it to an update function: the phase, retryCount, minAvailable
    and the pod counts (pending, running, succeeded, failed, terminating) and taskStatusCount."""
    return {"state": {"phase": phase}, "retryCount": retry, "minAvailable": min_available, "version": 0, **counts}
