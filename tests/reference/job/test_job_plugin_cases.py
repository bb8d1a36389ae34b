"""The job plugins (reference_scheduler/controllers/job/plugins/) in memory: what each one writes
into a task's pod (env, hostname and subdomain, ports, volumes and mounts, commands, annotations),
the objects it owns (Services, ConfigMaps, NetworkPolicies, Secrets) and how it reads its flags,
for small jobs, against the upstream plugins' behavior (pkg/controllers/job/plugins/)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

import pytest

from reference_scheduler.controllers.job.plugins import (
    env,
    factory,
    hcclrank,
    keys,
    mpi,
    pytorch,
    ray,
    ssh,
    svc,
    tensorflow,
)
from reference_scheduler.controllers.job.plugins.base import Obj, Plugin
from tests.reference.job import harness
from tests.reference.job.harness import container, env_of, task

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


def ray_head_command(port: int = 6379, dashboard: int = 8265, client: int = 10001) -> list[str]:
    return ["sh", "-c", f"ray start --head --block --dashboard-host=0.0.0.0 --port={port} --dashboard-port={dashboard} --ray-client-server-port={client}"]


def tf_config(cluster: dict[str, list[str]], kind: str, index: int) -> str:
    return json.dumps({"cluster": cluster, "task": {"type": kind, "index": index}}, separators=(",", ":"))


SSH_ITEMS = [{"key": f, "path": f".ssh/{f}"} for f in ("id_rsa", "id_rsa.pub", "authorized_keys", "config")]
TF_JOB = harness.job(task("ps"), task("worker", replicas=2))
TF_HOSTS = {"ps": ["tj-ps-0.tj:2222"], "worker": ["tj-worker-0.tj:2222", "tj-worker-1.tj:2222"]}

POD_CASES = [
    # env (plugins/env/env.go): the index on every container and init container.
    PodCase(
        "env-index",
        {"env": []},
        harness.job(task("worker", replicas=2, initContainers=[{"name": "init", "image": "busybox"}])),
        "worker",
        {"env:main": {"VK_TASK_INDEX": "1", "VC_TASK_INDEX": "1"}, "init-env:init": {"VK_TASK_INDEX": "1", "VC_TASK_INDEX": "1"}},
        index=1,
    ),
    # svc (plugins/svc/svc.go): the pod's own name as hostname, the job as subdomain, every task's
    # hosts from the ConfigMap, mounted at /etc/volcano.
    PodCase(
        "svc-hostname-env-mount",
        {"svc": []},
        MASTER_WORKERS,
        "worker",
        {
            "hostname": "tj-worker-1",
            "subdomain": "tj",
            "env:main": svc_env("tj-svc", "MASTER", "WORKER"),
            "mounts:main": [("tj-svc", "/etc/volcano", None)],
            "volumes": [{"name": "tj-svc", "configMap": {"name": "tj-svc"}}],
        },
        index=1,
    ),
    PodCase("svc-template-names-kept", {"svc": []}, harness.job(task("worker", hostname="custom", subdomain="grp")), "worker", {"hostname": "custom", "subdomain": "grp"}),
    PodCase("svc-dashed-task-env", {"svc": []}, harness.job(task("data-loader")), "data-loader", {"env:main": svc_env("tj-svc", "DATA_LOADER")}),
    PodCase(
        "svc-init-containers-too",
        {"svc": []},
        harness.job(task("worker", initContainers=[{"name": "init", "image": "busybox"}])),
        "worker",
        {"init-env:init": svc_env("tj-svc", "WORKER")},
    ),
    # ssh (plugins/ssh/ssh.go): the Secret's four files under .ssh, private to root by default.
    PodCase(
        "ssh-default-path",
        {"ssh": []},
        MASTER_WORKERS,
        "worker",
        {
            "volumes": [{"name": "tj-ssh", "secret": {"secretName": "tj-ssh", "defaultMode": 0o600, "items": SSH_ITEMS}}],
            "mounts:main": [("tj-ssh", "/root/.ssh", ".ssh")],
        },
    ),
    PodCase(
        "ssh-custom-path-readable",
        {"ssh": ["--ssh-key-file-path=/home/user/.ssh"]},
        MASTER_WORKERS,
        "master",
        {
            "volumes": [{"name": "tj-ssh", "secret": {"secretName": "tj-ssh", "defaultMode": 0o644, "items": SSH_ITEMS}}],
            "mounts:main": [("tj-ssh", "/home/user/.ssh", ".ssh")],
        },
    ),
    # mpi (distributed-framework/mpi/mpi.go): the ssh port everywhere, the workers' hosts for the
    # master.
    PodCase("mpi-master", {"mpi": []}, MASTER_WORKERS, "master", {"env:main": {"MPI_HOST": "tj-worker-0.tj,tj-worker-1.tj"}, "ports:main": {"mpijob-port": 22}}),
    PodCase("mpi-worker", {"mpi": []}, MASTER_WORKERS, "worker", {"env:main": {}, "ports:main": {"mpijob-port": 22}}, index=1),
    PodCase(
        "mpi-custom-flags",
        {"mpi": ["--master=launcher", "--worker=trainer", "--port=5000"]},
        harness.job(task("launcher"), task("trainer", replicas=3)),
        "launcher",
        {"env:main": {"MPI_HOST": "tj-trainer-0.tj,tj-trainer-1.tj,tj-trainer-2.tj"}, "ports:main": {"mpijob-port": 5000}},
    ),
    PodCase("mpi-master-without-workers", {"mpi": ["--worker=missing"]}, MASTER_WORKERS, "master", {"env:main": {}, "ports:main": {}}),
    PodCase(
        "mpi-port-already-open",
        {"mpi": []},
        harness.job(task("master", containers=({"name": "main", "ports": [{"name": "ssh", "containerPort": 22}]},)), task("worker")),
        "master",
        {"ports:main": {"ssh": 22}},
    ),
    # pytorch (distributed-framework/pytorch/pytorch.go): master rank 0, workers 1.., one world.
    PodCase(
        "pytorch-master",
        {"pytorch": []},
        MASTER_WORKERS,
        "master",
        {"env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "0"}, "ports:main": {"pytorchjob-port": 23456}},
    ),
    PodCase(
        "pytorch-worker",
        {"pytorch": []},
        MASTER_WORKERS,
        "worker",
        {"env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "2"}},
        index=1,
    ),
    PodCase(
        "pytorch-custom-flags",
        {"pytorch": ["--master=chief", "--worker=replica", "--port=29500"]},
        harness.job(task("chief"), task("replica", replicas=3)),
        "replica",
        {"env:main": {"MASTER_ADDR": "tj-chief-0.tj", "MASTER_PORT": "29500", "WORLD_SIZE": "4", "RANK": "1"}, "ports:main": {"pytorchjob-port": 29500}},
    ),
    # A task that is neither master nor worker joins no rank and is not counted in the world.
    PodCase(
        "pytorch-other-task",
        {"pytorch": []},
        harness.job(task("master"), task("worker", replicas=2), task("loader", replicas=4)),
        "loader",
        {"env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3"}},
    ),
    PodCase("pytorch-without-master", {"pytorch": []}, harness.job(task("worker", replicas=2)), "worker", {"env:main": {}, "ports:main": {}}),
    PodCase(
        "pytorch-master-template-names",
        {"pytorch": []},
        harness.job(task("master", hostname="lead", subdomain="grp"), task("worker")),
        "worker",
        {"env:main": {"MASTER_ADDR": "lead.grp", "MASTER_PORT": "23456", "WORLD_SIZE": "2", "RANK": "1"}},
    ),
    PodCase(
        "pytorch-not-init-containers",
        {"pytorch": []},
        harness.job(task("master", initContainers=[{"name": "init", "image": "busybox"}])),
        "master",
        {"init-env:init": {}, "env:main": {"MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "1", "RANK": "0"}},
    ),
    # tensorflow (distributed-framework/tensorflow/tensorflow.go): TF_CONFIG, roles in a fixed order.
    PodCase("tf-worker", {"tensorflow": []}, TF_JOB, "worker", {"env:main": {"TF_CONFIG": tf_config(TF_HOSTS, "worker", 1)}}, index=1),
    PodCase("tf-ps", {"tensorflow": []}, TF_JOB, "ps", {"env:main": {"TF_CONFIG": tf_config(TF_HOSTS, "ps", 0)}}),
    PodCase("tf-single-pod", {"tensorflow": []}, harness.job(task("worker")), "worker", {"env:main": {}}),
    PodCase(
        "tf-custom-flags",
        {"tensorflow": ["--ps=param", "--worker=trainer", "--chief=boss", "--evaluator=judge", "--port=3333"]},
        harness.job(task("boss"), task("judge"), task("trainer", replicas=2), task("param")),
        "boss",
        {"env:main": {"TF_CONFIG": tf_config({"ps": ["tj-param-0.tj:3333"], "worker": ["tj-trainer-0.tj:3333", "tj-trainer-1.tj:3333"], "chief": ["tj-boss-0.tj:3333"], "evaluator": ["tj-judge-0.tj:3333"]}, "chief", 0)}},
    ),
    PodCase(
        "tf-task-of-no-role",
        {"tensorflow": []},
        harness.job(task("worker", replicas=2), task("extra")),
        "extra",
        {"env:main": {"TF_CONFIG": tf_config({"worker": ["tj-worker-0.tj:2222", "tj-worker-1.tj:2222"]}, "extra", 0)}},
    ),
    # hcclrank (distributed-framework/hcclrank/hcclrank.go): the rank annotation.
    PodCase("hccl-master", {"hcclrank": []}, MASTER_WORKERS, "master", {"hccl-rank": "0"}),
    PodCase("hccl-worker-after-masters", {"hcclrank": []}, harness.job(task("master", replicas=2), task("worker", replicas=2)), "worker", {"hccl-rank": "3"}, index=1),
    PodCase("hccl-worker-without-master", {"hcclrank": ["--master=missing"]}, MASTER_WORKERS, "worker", {"hccl-rank": "1"}, index=1),
    PodCase("hccl-custom-roles", {"hcclrank": ["--master=lead", "--worker=member"]}, harness.job(task("lead", replicas=3), task("member", replicas=2)), "member", {"hccl-rank": "4"}, index=1),
    PodCase("hccl-other-task", {"hcclrank": []}, harness.job(task("master"), task("loader")), "loader", {"hccl-rank": None}),
    PodCase(
        "hccl-rank-env-wins",
        {"hcclrank": []},
        harness.job(task("master"), task("worker", replicas=2, containers=({"name": "main", "env": [{"name": "RANK", "value": "7"}]},))),
        "worker",
        {"hccl-rank": "7"},
    ),
    PodCase("hccl-annotation-kept", {"hcclrank": []}, harness.job(task("master", annotations={keys.HCCL_RANK: "5"})), "master", {"hccl-rank": "5"}),
    # With pytorch, hcclrank runs last and takes pytorch's RANK (worker 1 is rank 2, not 2 + 1).
    PodCase("hccl-after-pytorch", {"hcclrank": [], "pytorch": []}, harness.job(task("master", replicas=2), task("worker", replicas=2)), "worker", {"hccl-rank": "2"}, index=1),
    # ray (distributed-framework/ray/ray.go): the head starts the cluster, workers join it.
    PodCase(
        "ray-head",
        {"ray": []},
        HEAD_WORKERS,
        "head",
        {"command:head": ray_head_command(), "ports:head": {"gcs": 6379, "dashboard": 8265, "client-server": 10001}},
    ),
    PodCase("ray-worker", {"ray": []}, HEAD_WORKERS, "worker", {"command:worker": ["sh", "-c", "ray start --block --address=tj-head-0.tj:6379"], "ports:worker": {}}, index=1),
    PodCase(
        "ray-own-command-kept",
        {"ray": []},
        harness.job(task("head", containers=({"name": "head", "command": ["python", "serve.py"]},)), task("worker", containers=({"name": "worker", "command": ["python", "work.py"]},))),
        "head",
        {"command:head": ["python", "serve.py"], "ports:head": {"gcs": 6379, "dashboard": 8265, "client-server": 10001}},
    ),
    PodCase(
        "ray-worker-own-command-kept",
        {"ray": []},
        harness.job(task("head", containers=("head",)), task("worker", containers=({"name": "worker", "command": ["python", "work.py"]},))),
        "worker",
        {"command:worker": ["python", "work.py"]},
    ),
    PodCase(
        "ray-sidecar-untouched",
        {"ray": []},
        harness.job(task("head", containers=("head", "sidecar")), task("worker", containers=("worker",))),
        "head",
        {"command:sidecar": None, "ports:sidecar": {}, "command:head": ray_head_command()},
    ),
    PodCase(
        "ray-worker-to-head-template-names",
        {"ray": []},
        harness.job(task("head", containers=("head",), hostname="ray-head", subdomain="raygrp"), task("worker", containers=("worker",))),
        "worker",
        {"command:worker": ["sh", "-c", "ray start --block --address=ray-head.raygrp:6379"]},
    ),
    PodCase(
        "ray-custom-flags-head",
        {"ray": ["--head=boss", "--headContainer=ray-head", "--worker=minion", "--workerContainer=ray-worker", "--port=7000", "--dashboardPort=9000", "--clientPort=11000"]},
        harness.job(task("boss", containers=("ray-head",)), task("minion", containers=("ray-worker",))),
        "boss",
        {"command:ray-head": ray_head_command(7000, 9000, 11000), "ports:ray-head": {"gcs": 7000, "dashboard": 9000, "client-server": 11000}},
    ),
    PodCase(
        "ray-custom-flags-worker",
        {"ray": ["--head=boss", "--headContainer=ray-head", "--worker=minion", "--workerContainer=ray-worker", "--port=7000"]},
        harness.job(task("boss", containers=("ray-head",)), task("minion", containers=("ray-worker",))),
        "minion",
        {"command:ray-worker": ["sh", "-c", "ray start --block --address=tj-boss-0.tj:7000"]},
    ),
    # Together, as a framework job gets them: svc names the pods, pytorch points at the master.
    PodCase(
        "pytorch-with-svc",
        {"pytorch": [], "svc": []},
        MASTER_WORKERS,
        "worker",
        {"hostname": "tj-worker-0", "subdomain": "tj", "env:main": {**svc_env("tj-svc", "MASTER", "WORKER"), "MASTER_ADDR": "tj-master-0.tj", "MASTER_PORT": "23456", "WORLD_SIZE": "3", "RANK": "1"}},
    ),
]


def created_pod(plugins: list[Plugin], job: dict[str, Any], task_name: str, index: int) -> Obj:
    pod = harness.pod_of(job, task_name, index)
    for plugin in plugins:
        plugin.on_pod_create(pod, job)
    return pod


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    pod = created_pod(factory.build(case.plugins), case.job, case.task_name, case.index)
    for key, want in case.want.items():
        view, _, name = key.partition(":")
        assert VIEWS[view](pod, name) == want, key


def test_ray_without_head_task_is_refused() -> None:
    plugin = ray.Ray("ray", [])
    job = harness.job(task("worker", containers=("worker",)))
    with pytest.raises(ValueError, match="no head task 'head'"):
        plugin.on_pod_create(harness.pod_of(job, "worker"), job)


def test_plugins_leave_the_job_alone() -> None:
    """A plugin edits the pod it is given, never the job's template the next pod is made from."""
    job = harness.job(task("master"), task("worker", replicas=2))
    before = json.dumps(job, sort_keys=True)
    plugins = factory.build({name: [] for name in factory.KNOWN if name != "ray"})
    for name, index in (("master", 0), ("worker", 0), ("worker", 1)):
        created_pod(plugins, job, name, index)
    assert json.dumps(job, sort_keys=True) == before


# --- the objects a plugin owns ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ObjectsCase:
    """`want` maps `Kind/name` of every object the plugins own to fields of it compared whole
    (a missing key: that object must not be there)."""

    id: str
    plugins: dict[str, list[str]]
    job: dict[str, Any]
    want: dict[str, dict[str, Any]]


SVC_SPEC = {"clusterIP": "None", "selector": SELECTOR, "publishNotReadyAddresses": False}
NETWORK_POLICY = {
    "spec": {
        "podSelector": {"matchLabels": SELECTOR},
        "ingress": [{"from": [{"podSelector": {"matchLabels": SELECTOR}}]}],
        "policyTypes": ["Ingress"],
    }
}
MW_HOSTS = {
    "master.host": "tj-master-0.tj",
    "VC_MASTER_HOSTS": "tj-master-0.tj",
    "VC_MASTER_NUM": "1",
    "worker.host": "tj-worker-0.tj\ntj-worker-1.tj",
    "VC_WORKER_HOSTS": "tj-worker-0.tj,tj-worker-1.tj",
    "VC_WORKER_NUM": "2",
}
SSH_CONFIG = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\nHost tj-master-0\n  HostName tj-master-0.tj\nHost tj-worker-0\n  HostName tj-worker-0.tj\nHost tj-worker-1\n  HostName tj-worker-1.tj\n"


def ray_ports(port: int = 6379, dashboard: int = 8265, client: int = 10001) -> list[dict[str, Any]]:
    return [
        {"name": "gcs", "port": port, "targetPort": "gcs", "protocol": "TCP"},
        {"name": "dashboard", "port": dashboard, "targetPort": "dashboard", "protocol": "TCP"},
        {"name": "client-server", "port": client, "targetPort": "client-server", "protocol": "TCP"},
    ]


OBJECT_CASES = [
    # svc: the hosts ConfigMap, a headless Service over the job's pods, a NetworkPolicy that lets
    # only them in.
    ObjectsCase(
        "svc-default",
        {"svc": []},
        MASTER_WORKERS,
        {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": SVC_SPEC}, "NetworkPolicy/tj": NETWORK_POLICY},
    ),
    ObjectsCase(
        "svc-publish-not-ready",
        {"svc": ["--publish-not-ready-addresses"]},
        MASTER_WORKERS,
        {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": {**SVC_SPEC, "publishNotReadyAddresses": True}}, "NetworkPolicy/tj": NETWORK_POLICY},
    ),
    ObjectsCase("svc-disable-network-policy", {"svc": ["--disable-network-policy"]}, MASTER_WORKERS, {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": SVC_SPEC}}),
    ObjectsCase(
        "svc-flags-with-values",
        {"svc": ["--publish-not-ready-addresses=true", "--disable-network-policy=false"]},
        MASTER_WORKERS,
        {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": {**SVC_SPEC, "publishNotReadyAddresses": True}}, "NetworkPolicy/tj": NETWORK_POLICY},
    ),
    # A template hostname names one host for every pod of its task.
    ObjectsCase(
        "svc-template-hostname-one-host",
        {"svc": ["--disable-network-policy"]},
        harness.job(task("worker", replicas=2, hostname="custom", subdomain="grp")),
        {"ConfigMap/tj-svc": {"data": {"worker.host": "custom.grp", "VC_WORKER_HOSTS": "custom.grp", "VC_WORKER_NUM": "1"}}, "Service/tj": {"spec": SVC_SPEC}},
    ),
    ObjectsCase(
        "svc-dashed-task-keys",
        {"svc": ["--disable-network-policy"]},
        harness.job(task("data-loader", replicas=2)),
        {"ConfigMap/tj-svc": {"data": {"data_loader.host": "tj-data-loader-0.tj\ntj-data-loader-1.tj", "VC_DATA_LOADER_HOSTS": "tj-data-loader-0.tj,tj-data-loader-1.tj", "VC_DATA_LOADER_NUM": "2"}}, "Service/tj": {"spec": SVC_SPEC}},
    ),
    # ssh: one Secret, created once (the keys given here; otherwise generated, below).
    ObjectsCase(
        "ssh-given-keys",
        {"ssh": ["--ssh-private-key=PRIVATE", "--ssh-public-key=PUBLIC"]},
        MASTER_WORKERS,
        {"Secret/tj-ssh": {"type": "Opaque", keys.CREATE_ONLY: True, "stringData": {"id_rsa": "PRIVATE", "id_rsa.pub": "PUBLIC", "authorized_keys": "PUBLIC", "config": SSH_CONFIG}}},
    ),
    # ray: a Service in front of the head's three ports.
    ObjectsCase(
        "ray-head-service",
        {"ray": []},
        HEAD_WORKERS,
        {"Service/tj-head-svc": {"spec": {"selector": {**SELECTOR, "volcano.sh/task-spec": "head"}, "ports": ray_ports()}}},
    ),
    ObjectsCase(
        "ray-custom-head-service",
        {"ray": ["--head=boss", "--port=7000", "--dashboardPort=9000", "--clientPort=11000"]},
        HEAD_WORKERS,
        {"Service/tj-head-svc": {"spec": {"selector": {**SELECTOR, "volcano.sh/task-spec": "boss"}, "ports": ray_ports(7000, 9000, 11000)}}},
    ),
    # The others own nothing.
    *[ObjectsCase(f"{name}-owns-nothing", {name: []}, MASTER_WORKERS, {}) for name in ("env", "mpi", "pytorch", "tensorflow", "hcclrank")],
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
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


def test_ssh_generates_a_key_pair_once_per_call() -> None:
    (secret,) = ssh.Ssh("ssh", []).objects(MASTER_WORKERS)
    data = secret["stringData"]
    assert data["id_rsa"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert data["id_rsa.pub"].startswith("ssh-rsa ") and data["id_rsa.pub"].endswith("\n")
    assert data["authorized_keys"] == data["id_rsa.pub"]
    assert data["config"] == SSH_CONFIG
    assert secret[keys.CREATE_ONLY] is True, "regenerated keys would not match the ones pods mounted"


# --- flags ---------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FlagsCase:
    id: str
    plugin: type[Plugin]
    args: tuple[str, ...]
    want: dict[str, Any]


FLAG_CASES = [
    FlagsCase("svc-defaults", svc.Svc, (), {"publish_not_ready_addresses": False, "disable_network_policy": False}),
    FlagsCase("svc-bare-bools", svc.Svc, ("--publish-not-ready-addresses", "--disable-network-policy"), {"publish_not_ready_addresses": True, "disable_network_policy": True}),
    FlagsCase("svc-go-bool-spellings", svc.Svc, ("--publish-not-ready-addresses=1", "--disable-network-policy=t"), {"publish_not_ready_addresses": True, "disable_network_policy": True}),
    FlagsCase("svc-false", svc.Svc, ("--publish-not-ready-addresses=false", "--disable-network-policy=0"), {"publish_not_ready_addresses": False, "disable_network_policy": False}),
    FlagsCase("ssh-defaults", ssh.Ssh, (), {"ssh_key_file_path": "/root/.ssh", "ssh_private_key": "", "ssh_public_key": ""}),
    FlagsCase("ssh-path", ssh.Ssh, ("--ssh-key-file-path=/home/user/.ssh",), {"ssh_key_file_path": "/home/user/.ssh"}),
    FlagsCase("mpi-defaults", mpi.Mpi, (), {"master": "master", "worker": "worker", "port": 22}),
    FlagsCase("mpi-custom", mpi.Mpi, ("--master=launcher", "--worker=trainer", "--port=5000"), {"master": "launcher", "worker": "trainer", "port": 5000}),
    # Go's flag package takes one dash as well as two.
    FlagsCase("mpi-single-dash", mpi.Mpi, ("-port=2222", "-master=head"), {"master": "head", "port": 2222}),
    # An unknown flag is ignored, the rest still read (Volcano logs the error and goes on).
    FlagsCase("mpi-unknown-flag", mpi.Mpi, ("--no-such-flag=1", "--port=23"), {"master": "master", "port": 23}),
    FlagsCase("pytorch-defaults", pytorch.Pytorch, (), {"master": "master", "worker": "worker", "port": 23456}),
    FlagsCase("pytorch-custom", pytorch.Pytorch, ("--master=chief", "--worker=replica", "--port=29500"), {"master": "chief", "worker": "replica", "port": 29500}),
    FlagsCase("tf-defaults", tensorflow.Tensorflow, (), {"ps": "ps", "worker": "worker", "chief": "chief", "evaluator": "evaluator", "port": 2222}),
    FlagsCase("tf-custom", tensorflow.Tensorflow, ("--ps=param", "--worker=trainer", "--port=3333"), {"ps": "param", "worker": "trainer", "chief": "chief", "port": 3333}),
    FlagsCase("hccl-defaults", hcclrank.Hcclrank, (), {"master": "master", "worker": "worker"}),
    FlagsCase("hccl-custom", hcclrank.Hcclrank, ("--master=lead", "--worker=member"), {"master": "lead", "worker": "member"}),
    FlagsCase("ray-defaults", ray.Ray, (), {"head": "head", "headContainer": "head", "worker": "worker", "workerContainer": "worker", "port": 6379, "dashboardPort": 8265, "clientPort": 10001}),
    FlagsCase("ray-custom", ray.Ray, ("--headContainer=rh", "--dashboardPort=9000", "--clientPort=11000"), {"head": "head", "headContainer": "rh", "dashboardPort": 9000, "clientPort": 11000}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    flags = case.plugin(case.id, list(case.args)).flags  # type: ignore[attr-defined]
    assert {name: getattr(flags, name) for name in case.want} == case.want


# --- the registry ------------------------------------------------------------------------------
def test_every_builtin_plugin_is_registered_under_its_module_name() -> None:
    modules = (env, svc, ssh, mpi, pytorch, tensorflow, hcclrank, ray)
    assert {m.NAME: m for m in modules}.keys() == factory.KNOWN.keys()
    for module in modules:
        cls = factory.KNOWN[module.NAME]
        assert cls.__module__ == module.__name__


@pytest.mark.parametrize(
    ("plugins", "names", "args"),
    [
        (None, [], []),
        ({}, [], []),
        # A stable order whatever the Job's map order: hcclrank last, so it reads pytorch's RANK.
        ({"hcclrank": [], "pytorch": [], "svc": [], "env": []}, ["env", "svc", "pytorch", "hcclrank"], [[], [], [], []]),
        ({"ray": [], "tensorflow": [], "mpi": [], "ssh": []}, ["ssh", "mpi", "tensorflow", "ray"], [[], [], [], []]),
        ({"hcclrank": [], "ray": []}, ["ray", "hcclrank"], [[], []]),
        # Unknown names are dropped (the webhook refuses them); a null argument list is empty.
        ({"nope": ["x"], "mpi": None, "env": ["--a"]}, ["env", "mpi"], [["--a"], []]),
    ],
)
def test_build(plugins: dict[str, Any] | None, names: list[str], args: list[list[str]]) -> None:
    built = factory.build(plugins)
    assert [p.name for p in built] == names
    assert [list(p.args) for p in built] == args
    assert [type(p) for p in built] == [factory.KNOWN[n] for n in names]
