"""The kind backend: a kind cluster made from the node spec, or an existing one used by name.

The kit writes a kind config (one control-plane node, one worker per node of the spec, with the
group's labels; taints through a kubeadm JoinConfiguration patch) and drives the kind CLI. kind
nodes are real kubelets: their CPU and memory are the machine's, so those parts of a node spec do
not apply (said in a progress line); extended resources are advertised on the workers afterwards.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
from typing import Any, Callable, Sequence

import kubernetes
import yaml

from conformance.cluster import base, kube, nodes
from conformance.toolchain import cache, versions

NODE_IMAGE = f"kindest/node:{versions.KUBERNETES_VERSION}"
CREATE_WAIT = "120s"
Progress = Callable[[str], None]
AfterCreate = Callable[[base.ClusterHandle, Sequence[nodes.NodeGroup]], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def worker_names(cluster: str, count: int) -> list[str]:
    """kind names workers `<cluster>-worker`, `<cluster>-worker2`, ... in config order."""
    return [f"{cluster}-worker" + (str(i + 1) if i else "") for i in range(count)]


def _taint_patch(taints: Sequence[nodes.Taint]) -> str:
    registration = {"taints": [t.to_api() for t in taints]}
    return yaml.safe_dump({"kind": "JoinConfiguration", "nodeRegistration": registration}, sort_keys=False)


def config_for(groups: Sequence[nodes.NodeGroup], node_image: str = NODE_IMAGE) -> dict[str, Any]:
    """The kind config for a node spec: the control plane first, then each group's workers."""
    config_nodes: list[dict[str, Any]] = [{"role": "control-plane", "image": node_image}]
    for group in groups:
        for _ in range(group.count):
            worker: dict[str, Any] = {"role": "worker", "image": node_image}
            if group.labels:
                worker["labels"] = dict(group.labels)
            if group.taints:
                worker["kubeadmConfigPatches"] = [_taint_patch(group.taints)]
            config_nodes.append(worker)
    return {"kind": "Cluster", "apiVersion": "kind.x-k8s.io/v1alpha4", "nodes": config_nodes}


def advertise_extended(handle: base.ClusterHandle, groups: Sequence[nodes.NodeGroup]) -> None:
    """Patch each worker's status capacity with its group's extended resources."""
    api = kube.client(handle.kubeconfig, handle.context)
    core = kubernetes.client.CoreV1Api(api)
    names = iter(worker_names(handle.name, sum(g.count for g in groups)))
    for group in groups:
        for _ in range(group.count):
            name = next(names)
            if group.extended:
                resources = dict(group.extended)
                core.patch_node_status(name, {"status": {"capacity": resources, "allocatable": resources}})


class KindBackend:
    name = "kind"

    def __init__(
        self,
        kind_binary: str | None = None,
        state_root: pathlib.Path | None = None,
        progress: Progress = _stderr,
        node_image: str = NODE_IMAGE,
        after_create: AfterCreate | None = None,
    ) -> None:
        self.kind_binary = kind_binary
        self.state_root = state_root or cache.state_dir() / "kind"
        self.progress = progress
        self.node_image = node_image
        self.after_create = after_create or advertise_extended

    def _kind(self) -> str:
        found = self.kind_binary or shutil.which("kind")
        if not found:
            raise base.ClusterError(
                "kind backend: the kind command was not found on PATH; install it "
                "(`go install sigs.k8s.io/kind@v0.29.0`, or the kind release binary) and make sure Docker runs. "
                "The embedded backend (--backend embedded) needs neither."
            )
        return found

    def _run(self, args: Sequence[str], check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        argv = [self._kind(), *args]
        proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)
        if check and proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise base.ClusterError(f"kind backend: `{' '.join(argv)}` exited {proc.returncode}:\n{tail}")
        return proc

    def state_dir(self, cluster: str) -> pathlib.Path:
        return self.state_root / cluster

    def kubeconfig(self, cluster: str) -> pathlib.Path:
        return self.state_dir(cluster) / "kubeconfig"

    def clusters(self) -> list[str]:
        return [line.strip() for line in self._run(["get", "clusters"]).stdout.splitlines() if line.strip()]

    def up(self, cluster: str, groups: Sequence[nodes.NodeGroup]) -> base.ClusterHandle:
        state = self.state_dir(cluster)
        if cluster in self.clusters():
            state.mkdir(parents=True, exist_ok=True)
            self.kubeconfig(cluster).write_text(self._run(["get", "kubeconfig", "--name", cluster]).stdout)
            self.progress(f"kind cluster {cluster} exists; using it as it is")
            return base.ClusterHandle(name=cluster, backend=self.name, kubeconfig=self.kubeconfig(cluster), context=f"kind-{cluster}", owned=False, reused=True, state_dir=state)
        skipped = sorted({f"{k}" for g in groups for k, v in (("cpu", g.cpu), ("memory", g.memory), ("pods", g.pods)) if v != getattr(nodes.NodeGroup(), k)})
        if skipped:
            self.progress(f"kind cluster {cluster}: kind nodes use the machine's resources; {', '.join(skipped)} of the node spec do not apply")
        state.mkdir(parents=True, exist_ok=True)
        config = state / "kind-config.yaml"
        config.write_text(yaml.safe_dump(config_for(groups, self.node_image), sort_keys=False))
        handle = base.ClusterHandle(name=cluster, backend=self.name, kubeconfig=self.kubeconfig(cluster), context=f"kind-{cluster}", state_dir=self.state_dir(cluster))
        try:
            self.progress(f"kind cluster {cluster}: creating ({sum(g.count for g in groups)} workers)")
            self._run(["create", "cluster", "--name", cluster, "--config", str(config), "--kubeconfig", str(self.kubeconfig(cluster)), "--wait", CREATE_WAIT])
            if any(g.extended for g in groups):
                self.after_create(handle, groups)
        except BaseException:
            self.progress(f"kind cluster {cluster}: creation failed or was interrupted; cleaning up")
            self._run(["delete", "cluster", "--name", cluster], check=False)
            shutil.rmtree(state, ignore_errors=True)
            raise
        return handle

    def down(self, cluster: str) -> None:
        if cluster in self.clusters():
            self._run(["delete", "cluster", "--name", cluster])
            self.progress(f"kind cluster {cluster}: deleted")
        else:
            self.progress(f"kind cluster {cluster}: kind does not know it; removing local state only")
        shutil.rmtree(self.state_dir(cluster), ignore_errors=True)

    def status(self, cluster: str) -> base.ClusterStatus:
        running = cluster in self.clusters()
        kubeconfig = self.kubeconfig(cluster) if self.kubeconfig(cluster).exists() else None
        return base.ClusterStatus(cluster, self.name, running, kubeconfig, "listed by `kind get clusters`" if running else "not listed by `kind get clusters`")
