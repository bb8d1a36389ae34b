"""The job plugins' table machinery (controllers/job/plugins/test_<plugin>.py): a PodCase is the pod
a task gets after the plugins ran on it, an ObjectsCase the objects the plugins own, a FlagsCase
how a plugin reads its flags; each with its check. Small jobs from ../harness.py."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from reference_scheduler.controllers.job.plugins import factory, keys
from reference_scheduler.controllers.job.plugins.base import Obj, Plugin
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import container, env_of, task

SELECTOR = {"volcano.sh/job-name": "tj", "volcano.sh/job-namespace": "ns"}

MASTER_WORKERS = harness.job(task("master"), task("worker", replicas=2))

HEAD_WORKERS = harness.job(task("head", containers=("head",)), task("worker", replicas=2, containers=("worker",)))


def ports_of(c: Obj) -> dict[str, int]:
    return {p["name"]: int(p["containerPort"]) for p in c.get("ports") or []}


def mounts_of(c: Obj) -> list[tuple[str, str, str | None]]:
    return [(m["name"], m["mountPath"], m.get("subPath")) for m in c.get("volumeMounts") or []]


# What a row may assert of a pod after its plugins ran; each named view is compared whole.
VIEWS: dict[str, Callable[[Obj, str], Any]] = {
    "env": lambda pod, c: env_of(container(pod, c)),
    "init-env": lambda pod, c: env_of(container(pod, c, init=True)),
    "ports": lambda pod, c: ports_of(container(pod, c)),
    "mounts": lambda pod, c: mounts_of(container(pod, c)),
    "command": lambda pod, c: container(pod, c).get("command"),
    "hostname": lambda pod, _: pod["spec"].get("hostname"),
    "subdomain": lambda pod, _: pod["spec"].get("subdomain"),
    "volumes": lambda pod, _: pod["spec"].get("volumes"),
    "hccl-rank": lambda pod, _: (pod["metadata"].get("annotations") or {}).get(keys.HCCL_RANK),
}


@dataclasses.dataclass(frozen=True)
class PodCase:
    """The pod of `task_name`'s `index` in `job`, after `plugins` (factory.build, in its order)
    ran on it; `want` maps a view (`env:<container>`, `ports:<container>`, `hostname`...) to what
    it must be exactly."""

    id: str
    plugins: dict[str, list[str]]
    job: dict[str, Any]
    task_name: str
    want: dict[str, Any]
    index: int = 0


def svc_env(cm: str, *tasks: str) -> dict[str, str]:
    out = {}
    for t in tasks:
        for suffix in ("HOSTS", "NUM"):
            out[f"VC_{t}_{suffix}"] = f"configmap:{cm}/VC_{t}_{suffix}"
    return out


def created_pod(plugins: list[Plugin], job: dict[str, Any], task_name: str, index: int) -> Obj:
    pod = harness.pod_of(job, task_name, index)
    for plugin in plugins:
        plugin.on_pod_create(pod, job)
    return pod


def check_pod(case: PodCase) -> None:
    """The views the case names of the pod its plugins made, each compared whole."""
    pod = created_pod(factory.build(case.plugins), case.job, case.task_name, case.index)
    for key, want in case.want.items():
        view, _, name = key.partition(":")
        assert VIEWS[view](pod, name) == want, key


# --- the objects a plugin owns ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ObjectsCase:
    """`want` maps `Kind/name` of every object the plugins own to fields of it compared whole
    (a missing key: that object must not be there)."""

    id: str
    plugins: dict[str, list[str]]
    job: dict[str, Any]
    want: dict[str, dict[str, Any]]


def check_objects(case: ObjectsCase) -> None:
    """The objects the case's plugins own, each owned by the job."""
    owned = [body for plugin in factory.build(case.plugins) for body in plugin.objects(case.job)]
    by_key = {f"{body['kind']}/{body['metadata']['name']}": body for body in owned}
    assert len(by_key) == len(owned), "two objects share a kind and name"
    assert sorted(by_key) == sorted(case.want)
    for key, fields in case.want.items():
        for field, value in fields.items():
            assert by_key[key][field] == value, f"{key} {field}"
    for body in owned:
        # Owned by the job, so they go when it is deleted.
        assert body["metadata"]["namespace"] == "ns"
        assert body["metadata"]["ownerReferences"] == [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "tj", "uid": harness.JOB_UID, "controller": True, "blockOwnerDeletion": True}]


# --- flags ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FlagsCase:
    id: str
    plugin: type[Plugin]
    args: tuple[str, ...]
    want: dict[str, Any]


def check_flags(case: FlagsCase) -> None:
    """The flags the case names, as the plugin read them from its arguments."""
    flags = case.plugin(case.id, list(case.args)).flags  # type: ignore[attr-defined]
    assert {name: getattr(flags, name) for name in case.want} == case.want
