"""The kind backend: a real control plane (kubeadm, kubelet, containerd in Docker containers), with
the node spec's nodes as kwok nodes the kit drives from this machine.

`up` makes a kind cluster of one control-plane node and `workers` real workers (none unless asked:
a scenario's nodes are the spec's, a real worker is for what needs a kubelet, such as the device
plugin), then starts the kit's kwok controller against it (kwok_controller.py) and creates the
spec's nodes exactly as on the embedded backend: same shapes, labels, taints, extended resources,
same pod stages. kind's own workloads (kube-proxy, CoreDNS, ...) are kept off the kwok nodes,
which have no kubelet to run them.

The node image is kind's published `kindest/node:v1.33.2` where it can be pulled, else one built
here (kind_image.py), whose nodes get static pod routes instead of kindnetd. The Docker engine
is found or started by docker.py. The API server reaches this machine (the reference's webhook)
at the gateway address of kind's Docker network.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Any, Callable, Mapping, Sequence

import kubernetes
import yaml

from conformance.cluster import (
    base,
    docker,
    embedded,
    kind_image,
    kind_workloads,
    kube,
    kwok_controller,
    nodes,
    owners,
    processes,
)
from conformance.toolchain import cache, install, versions

NODE_IMAGE = versions.KIND_NODE_IMAGE
CREATE_TIMEOUT_S = 600.0
READY_TIMEOUT_S = 180.0
# Docker network kind puts its nodes on.
NETWORK = "kind"
# Where kind puts its own workloads (kube-proxy, CoreDNS, kindnet; the storage provisioner).
SYSTEM_NAMESPACES = ("kube-system", "local-path-storage")
Progress = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# kubelet v1.35 refuses to start on a cgroup v1 host unless told otherwise (KEP-5573); the field
# exists from v1.31, so every pinned release takes it.
ALLOW_CGROUP_V1 = "kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nfailCgroupV1: false\n"


def host_has_cgroup_v1() -> bool:
    """This machine's cgroup hierarchy is v1 (the nodes, being containers of its engine, share it)."""
    return not pathlib.Path("/sys/fs/cgroup/cgroup.controllers").exists()


# The cluster's pod network (kind's default, said outright: the static network's NAT rule names it).
POD_SUBNET = "10.244.0.0/16"


def config_for(workers: int, node_image: str = NODE_IMAGE, static_cni: bool = False, cgroup_v1: bool = False) -> dict[str, Any]:
    """The kind config: the control plane, then `workers` real workers."""
    config: dict[str, Any] = {
        "kind": "Cluster",
        "apiVersion": "kind.x-k8s.io/v1alpha4",
        "nodes": [{"role": "control-plane", "image": node_image}, *({"role": "worker", "image": node_image} for _ in range(workers))],
    }
    if static_cni:
        config["networking"] = {"disableDefaultCNI": True, "podSubnet": POD_SUBNET}
    if cgroup_v1:
        config["kubeadmConfigPatches"] = [ALLOW_CGROUP_V1]
    return config


def cni_conflist(pod_cidr: str) -> dict[str, Any]:
    """A node's pod network without a CNI daemon: point-to-point links to its pods, addresses from
    its pod CIDR (the one kube-controller-manager gave it). No masquerading here: ptp's would hide
    a pod behind its node's address from pods on other nodes too (Open MPI, which checks a peer's
    address, drops such a connection); masquerade_rule leaves pod-to-pod traffic as it is."""
    return {
        "cniVersion": "0.4.0",
        "name": "vck-static",
        "plugins": [
            {"type": "ptp", "ipMasq": False, "mtu": 1500, "ipam": {"type": "host-local", "ranges": [[{"subnet": pod_cidr}]], "routes": [{"dst": "0.0.0.0/0"}]}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }


def masquerade_rule(pod_cidr: str) -> list[str]:
    """The node's NAT rule (nat table, POSTROUTING) for its pods' traffic leaving the pod network,
    as kindnetd's ip-masq does: pod to pod, on any node, keeps its addresses, as Kubernetes'
    network model asks."""
    return ["-s", pod_cidr, "!", "-d", POD_SUBNET, "-j", "MASQUERADE"]


def containerd_ref(image: str) -> str:
    """An image's full name as containerd lists it (`busybox:1` is `docker.io/library/busybox:1`)."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return image
    return f"docker.io/{image}" if rest else f"docker.io/library/{image}"


def worker_names(cluster: str, count: int) -> list[str]:
    """kind names workers `<cluster>-worker`, `<cluster>-worker2`, ... in config order."""
    return [f"{cluster}-worker" + (str(i + 1) if i else "") for i in range(count)]


class KindBackend:
    name = "kind"

    def __init__(
        self,
        state_root: pathlib.Path | None = None,
        progress: Progress = _stderr,
        node_image: str = NODE_IMAGE,
        node_kube: str | None = versions.KUBERNETES_VERSION,
        workers: int = 0,
        tools: Callable[[], Mapping[str, pathlib.Path]] = install.paths,
        engine: Callable[[Progress], docker.Engine] = docker.ensure,
        owner: owners.Owner | None = None,
        images: Sequence[str] = (),
        device_plugin: bool = False,
    ) -> None:
        self.state_root = state_root or cache.state_dir() / "kind"
        # The process a cluster this backend creates belongs to (recorded in its state folder, so
        # `vck cluster prune` deletes it once that process is gone; see owners.py).
        self.owner = owner
        self.progress = progress
        self.node_image = node_image
        # The pinned Kubernetes release node_image is the kit's node of, built here when it cannot
        # be pulled; None for a user's own image (`--kind-image`), which is never built here.
        self.node_kube = node_kube
        self.workers = workers
        # Images of this engine the real workers get (`kind load`): the workloads' (built here).
        self.images = tuple(images)
        # The fake device plugin's DaemonSet on the real workers (GPUs a real container is given).
        self.device_plugin = device_plugin
        self.tools = tools
        self._engine_factory = engine
        self._engine: docker.Engine | None = None

    # --- tools ------------------------------------------------------------------------------------
    def engine(self) -> docker.Engine:
        if self._engine is None:
            self._engine = self._engine_factory(self.progress)
        return self._engine

    def kind_binary(self) -> str:
        """The kind CLI: the toolchain's (a release download, else built from its Go module)."""
        return str(install.binary("kind", self.progress))

    def _run(self, args: Sequence[str], check: bool = True, timeout: float = CREATE_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        argv = [self.kind_binary(), *args]
        proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout)
        if check and proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise base.ClusterError(f"kind backend: `kind {' '.join(args)}` exited {proc.returncode}:\n{tail}")
        return proc

    # --- paths ------------------------------------------------------------------------------------
    def state_dir(self, cluster: str) -> pathlib.Path:
        return self.state_root / cluster

    def kubeconfig(self, cluster: str) -> pathlib.Path:
        return self.state_dir(cluster) / "kubeconfig"

    def _kwok(self, cluster: str) -> kwok_controller.KwokController:
        return kwok_controller.KwokController(self.state_dir(cluster) / "kwok", self.kubeconfig(cluster), f"kind-{cluster}", embedded.stage_documents(), self.tools)

    def clusters(self) -> list[str]:
        return [line.strip() for line in self._run(["get", "clusters"], timeout=60).stdout.splitlines() if line.strip()]

    def kit_clusters(self) -> list[str]:
        """The kind clusters with the kit's state here (created by it, or reused), whether or not
        kind still runs them: what `vck cluster list` shows and `prune` may delete."""
        if not self.state_root.is_dir():
            return []
        return sorted(p.name for p in self.state_root.iterdir() if p.is_dir())

    def owner_of(self, cluster: str) -> owners.Owner | None:
        return owners.read(self.state_dir(cluster))

    def processes(self, cluster: str) -> list[processes.Process]:
        """The kit's processes for this cluster on this machine (its kwok controller)."""
        return processes.under(self.state_dir(cluster))

    # --- protocol ---------------------------------------------------------------------------------
    def up(self, cluster: str, groups: Sequence[nodes.NodeGroup]) -> base.ClusterHandle:
        engine = self.engine()
        state = self.state_dir(cluster)
        if cluster in self.clusters():
            state.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.kubeconfig(cluster).write_text(self._run(["get", "kubeconfig", "--name", cluster], timeout=60).stdout)
            handle = self._handle(cluster, engine, owned=False, reused=True)
            self._nodes(handle, groups)
            self._load_images(handle)
            self._devices(handle)
            self.progress(f"kind cluster {cluster} exists; using it (the kit's nodes added where missing)")
            return handle
        image = kind_image.ensure(engine, self.node_image, self.progress, kube=self.node_kube)
        static_cni = kind_image.is_static_cni(engine, image)
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.owner is not None:
            owners.record(state, self.owner)
        config = state / "kind-config.yaml"
        config.write_text(yaml.safe_dump(config_for(self.workers, image, static_cni, host_has_cgroup_v1()), sort_keys=False))
        started = time.monotonic()
        try:
            self.progress(f"kind cluster {cluster}: creating (1 control plane, {self.workers} real workers, image {image})")
            # Without a CNI of its own the control plane is never Ready on its own: kind does not
            # wait, the kit installs the routes and waits itself.
            wait = [] if static_cni else ["--wait", f"{READY_TIMEOUT_S:.0f}s"]
            self._run(["create", "cluster", "--name", cluster, "--config", str(config), "--kubeconfig", str(self.kubeconfig(cluster)), *wait])
            handle = self._handle(cluster, engine, owned=True, reused=False)
            api = kube.client(handle.kubeconfig, handle.context)
            if static_cni:
                self._static_routes(engine, api)
            kube.wait_nodes_ready(api, [kube.name_of(n) for n in self._real_nodes(api)], READY_TIMEOUT_S)
            self._keep_system_pods_off_kwok_nodes(api)
            self._nodes(handle, groups)
            self._load_images(handle)
            self._devices(handle)
        except BaseException:
            self.progress(f"kind cluster {cluster}: creation failed or was interrupted; cleaning up")
            self.down(cluster)
            raise
        self.progress(f"kind cluster {cluster}: ready in {time.monotonic() - started:.0f}s")
        return handle

    def _handle(self, cluster: str, engine: docker.Engine, owned: bool, reused: bool) -> base.ClusterHandle:
        handle = base.ClusterHandle(
            name=cluster, backend=self.name, kubeconfig=self.kubeconfig(cluster), context=f"kind-{cluster}",
            owned=owned, reused=reused, state_dir=self.state_dir(cluster), host_address=engine.network_gateway(NETWORK) or "127.0.0.1",
            node_selector=(nodes.KIT_NODE_SELECTOR, nodes.LENT_NODE_SELECTOR),
        )
        api = kube.client(handle.kubeconfig, handle.context)
        return dataclasses.replace(handle, real_nodes=tuple(self._workers(api)))

    def _workers(self, api: kubernetes.client.ApiClient) -> list[str]:
        """The real nodes that are not the control plane: what a scenario's real_nodes are lent from."""
        return sorted(kube.name_of(n) for n in self._real_nodes(api) if not set(nodes.CONTROL_PLANE_LABELS) & set(kube.meta(n).labels or {}))

    def _devices(self, handle: base.ClusterHandle) -> None:
        """The fake device plugin on every real worker, which then advertises its GPUs."""
        if self.device_plugin and handle.real_nodes:
            kind_workloads.deploy_device_plugin(handle, self.kind_binary(), self.engine(), list(handle.real_nodes), self.progress)

    def _load_images(self, handle: base.ClusterHandle) -> None:
        """`kind load` this engine's workload images into the real workers (a pod's image is
        then present: nothing is pulled)."""
        if not self.images or not handle.real_nodes:
            return
        engine = self.engine()
        for image in self.images:
            if not engine.has_image(image):
                continue  # a user's image the kubelet pulls
            # kind's own "already present" test compares image ids, which differ once loaded.
            missing = [n for n in handle.real_nodes if not engine.run(["exec", n, "ctr", "-n", "k8s.io", "images", "ls", "-q", f"name=={containerd_ref(image)}"], check=False).stdout.strip()]
            if not missing:
                continue
            started = time.monotonic()
            self.progress(f"kind cluster {handle.name}: loading {image} into {', '.join(missing)}")
            self._run(["load", "docker-image", image, "--name", handle.name, "--nodes", ",".join(missing)], timeout=1800)
            self.progress(f"kind cluster {handle.name}: {image} loaded in {time.monotonic() - started:.0f}s")

    def _real_nodes(self, api: kubernetes.client.ApiClient) -> list[Any]:
        """The nodes kind runs (its control plane and workers), not the kit's kwok nodes."""
        core = kubernetes.client.CoreV1Api(api)
        return [n for n in core.list_node().items if (kube.meta(n).annotations or {}).get(nodes.KWOK_NODE_ANNOTATION) != "fake"]

    def _static_routes(self, engine: docker.Engine, api: kubernetes.client.ApiClient) -> None:
        """Each real node's CNI configuration for its pod CIDR, and a route to every other node's
        pods through that node (they share kind's Docker network)."""
        core = kubernetes.client.CoreV1Api(api)
        real = {kube.name_of(n) for n in self._real_nodes(api)}
        state = kube.watch_until(
            core.list_node,
            lambda s: real <= set(s) and all(s[n].get("spec", {}).get("podCIDR") for n in real),
            READY_TIMEOUT_S,
            "kube-controller-manager to give every node a pod CIDR",
        )
        cidrs = {n: (state[n]["spec"]["podCIDR"], _internal_ip(state[n])) for n in real}
        for name, (cidr, _) in cidrs.items():
            conflist = json.dumps(cni_conflist(cidr)).encode()
            engine.run(["exec", "-i", name, "sh", "-c", "mkdir -p /etc/cni/net.d && cat > /etc/cni/net.d/10-vck-static.conflist"], input_bytes=conflist, timeout=60)
            rule = masquerade_rule(cidr)
            if engine.run(["exec", name, "iptables", "-t", "nat", "-C", "POSTROUTING", *rule], timeout=60, check=False).returncode != 0:
                engine.run(["exec", name, "iptables", "-t", "nat", "-A", "POSTROUTING", *rule], timeout=60)
            for other, (other_cidr, other_ip) in cidrs.items():
                if other != name:
                    engine.run(["exec", name, "ip", "route", "replace", other_cidr, "via", other_ip], timeout=60)

    def _keep_system_pods_off_kwok_nodes(self, api: kubernetes.client.ApiClient) -> None:
        """kind's own workloads (kube-proxy and kindnet tolerate every taint; CoreDNS and the
        storage provisioner are placed by kube-scheduler) are kept off the kwok nodes: no kubelet
        runs them there, and they would take a scenario node's pod slots and resources."""
        apps = kubernetes.client.AppsV1Api(api)
        key, value = nodes.KIT_NODE_LABEL
        away = {"matchExpressions": [{"key": key, "operator": "NotIn", "values": [value]}]}
        patch = {"spec": {"template": {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [away]}}}}}}}
        for namespace in SYSTEM_NAMESPACES:
            for ds in apps.list_namespaced_daemon_set(namespace).items:
                apps.patch_namespaced_daemon_set(kube.name_of(ds), namespace, patch)
            for deployment in apps.list_namespaced_deployment(namespace).items:
                apps.patch_namespaced_deployment(kube.name_of(deployment), namespace, patch)

    def _nodes(self, handle: base.ClusterHandle, groups: Sequence[nodes.NodeGroup]) -> None:
        """The kwok controller running, and the spec's nodes present and Ready. With no groups, a
        bare kind cluster: no kit node and no kwok controller (another tool may bring its own)."""
        if not groups:
            return
        self._kwok(handle.name).start(self.progress)
        api = kube.client(handle.kubeconfig, handle.context)
        names = kube.create_nodes(api, nodes.kwok_nodes(groups))
        kube.wait_nodes_ready(api, names, READY_TIMEOUT_S)

    def down(self, cluster: str) -> None:
        self._kwok(cluster).stop()
        if cluster in self.clusters():
            self._run(["delete", "cluster", "--name", cluster])
            self.progress(f"kind cluster {cluster}: deleted")
        else:
            self.progress(f"kind cluster {cluster}: kind does not know it; removing local state only")
        shutil.rmtree(self.state_dir(cluster), ignore_errors=True)

    def status(self, cluster: str) -> base.ClusterStatus:
        running = cluster in self.clusters()
        kubeconfig = self.kubeconfig(cluster) if self.kubeconfig(cluster).exists() else None
        kwok = "running" if self._kwok(cluster).running() else "not running"
        return base.ClusterStatus(cluster, self.name, running, kubeconfig, f"listed by `kind get clusters`; the kit's kwok controller {kwok}" if running else "not listed by `kind get clusters`")


def _internal_ip(node: dict[str, Any]) -> str:
    for address in node.get("status", {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address["address"])
    raise base.ClusterError(f"node {node['metadata']['name']} has no InternalIP")
