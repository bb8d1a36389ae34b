"""Volcano's built-in job plugins, each with the flags and defaults of its upstream namesake.

Upstream: pkg/controllers/job/plugins/{env,svc,ssh}/ and distributed-framework/{mpi,pytorch,
tensorflow,hcclrank,ray}/.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Sequence

from reference_scheduler.controllers.job.plugins import keys
from reference_scheduler.controllers.job.plugins.base import (
    Obj,
    Plugin,
    add_env,
    containers,
    host_of,
    job_selector,
    open_port,
    owned,
    parse_flags,
    pod_index,
    pod_task,
    task_by_name,
    task_hosts,
)


def _bool(value: str) -> bool:
    return value.lower() in ("1", "t", "true", "yes")


def _env_key(task: str) -> str:
    return task.replace("-", "_")


@dataclasses.dataclass
class Env(Plugin):
    """VK_TASK_INDEX and VC_TASK_INDEX on every container and init container."""

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        index = str(pod_index(pod))
        for c in containers(pod):
            add_env(c, {"name": "VK_TASK_INDEX", "value": index}, {"name": "VC_TASK_INDEX", "value": index})


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


@dataclasses.dataclass
class Ssh(Plugin):
    """A Secret `<job>-ssh` with a fresh RSA key pair, authorized_keys and an ssh config naming
    every pod, mounted at /root/.ssh (or --ssh-key-file-path)."""

    def __post_init__(self) -> None:
        def define(p: argparse.ArgumentParser) -> None:
            p.add_argument("--ssh-key-file-path", default=keys.SSH_PATH)
            p.add_argument("--ssh-private-key", default="")
            p.add_argument("--ssh-public-key", default="")

        self.flags = parse_flags(self.name, self.args, define)

    def secret_name(self, job: Obj) -> str:
        return f"{job['metadata']['name']}-ssh"

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        name = self.secret_name(job)
        files = [keys.SSH_PRIVATE, keys.SSH_PUBLIC, keys.SSH_AUTHORIZED, keys.SSH_CONFIG]
        mode = 0o600 if self.flags.ssh_key_file_path == keys.SSH_PATH else 0o644
        pod["spec"].setdefault("volumes", []).append({
            "name": name,
            "secret": {"secretName": name, "defaultMode": mode, "items": [{"key": f, "path": f".ssh/{f}"} for f in files]},
        })
        for c in containers(pod):
            c.setdefault("volumeMounts", []).append({"name": name, "mountPath": self.flags.ssh_key_file_path, "subPath": ".ssh"})

    def objects(self, job: Obj) -> list[Obj]:
        from reference_scheduler.controllers.job.plugins import sshkeys

        private, public = (self.flags.ssh_private_key, self.flags.ssh_public_key) if self.flags.ssh_private_key else sshkeys.generate()
        config = sshkeys.config(job, task_hosts)
        data = {keys.SSH_PRIVATE: private, keys.SSH_PUBLIC: public, keys.SSH_AUTHORIZED: public, keys.SSH_CONFIG: config}
        # Generated once: an existing Secret is never regenerated (the pods already mount it).
        return [owned(job, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": self.secret_name(job)}, "type": "Opaque", "stringData": data, keys.CREATE_ONLY: True})]


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


KNOWN: dict[str, type[Plugin]] = {
    "env": Env,
    "svc": Svc,
    "ssh": Ssh,
    "mpi": Mpi,
    "pytorch": Pytorch,
    "tensorflow": Tensorflow,
    "hcclrank": Hcclrank,
    "ray": Ray,
}


def build(plugins: dict[str, Sequence[str]] | None) -> list[Plugin]:
    """The job's plugins in a stable order (Volcano iterates its map; the order does not change
    what any plugin writes, since none reads another's output except hcclrank reading RANK)."""
    order = ["env", "svc", "ssh", "mpi", "pytorch", "tensorflow", "ray", "hcclrank"]
    names = sorted((plugins or {}).keys(), key=lambda n: order.index(n) if n in order else len(order))
    return [KNOWN[n](n, list((plugins or {})[n] or [])) for n in names if n in KNOWN]
