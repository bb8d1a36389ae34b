"""The embedded backend: a real control plane from the cached toolchain, with kwok's simulated nodes.

kwokctl (`--runtime binary`) starts etcd, kube-apiserver, kube-controller-manager and the kwok
controller as local processes; kube-scheduler is disabled because the implementation under test
schedules. kube-controller-manager stays on: without it there is no garbage collection, no namespace
deletion and no default ServiceAccount. kwok's own pod stages are replaced by the kit's
(`stages/`), so a pod runs until the scenario says how it ends.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Any, Callable, Mapping, Sequence

import yaml

from conformance import data
from conformance.cluster import base, kube, nodes, owners, ports, processes
from conformance.toolchain import cache, install, versions

STAGES_DIR = data.kit("cluster", "stages")
API_READY_TIMEOUT_S = 120.0
NODES_READY_TIMEOUT_S = 60.0
Progress = Callable[[str], None]
# Set (to anything) where no cluster may start: `make check` runs the tests that need none, and
# this turns a test that starts one anyway into a clear failure instead of a slow pass.
NO_CLUSTERS_ENV = "VCK_NO_CLUSTERS"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# The ports kwokctl's binary runtime needs. kwokctl would pick them itself by counting down from
# 32767, so clusters started at the same moment (parallel test workers) pick the same ports; the
# kit reserves them instead (`ports.py`: below the ephemeral range, one registry per machine).
PORT_OPTIONS = ("etcdPeerPort", "etcdPort", "kubeApiserverPort", "kwokControllerPort", "kubeControllerManagerPort")


def kwokctl_configuration() -> dict[str, object]:
    return {
        "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
        "kind": "KwokctlConfiguration",
        "options": dict(zip(PORT_OPTIONS, ports.reserve(len(PORT_OPTIONS)), strict=True)),
    }


def stage_documents() -> list[dict[str, object]]:
    """The kit's pod stages, in file order."""
    docs = []
    for path in sorted(STAGES_DIR.glob("pod-*.yaml")):
        docs.append(yaml.safe_load(path.read_text()))
    return docs


class EmbeddedBackend:
    name = "embedded"

    def __init__(
        self,
        state_root: pathlib.Path | None = None,
        progress: Progress = _stderr,
        tools: Callable[[], Mapping[str, pathlib.Path]] | None = None,
        owner: owners.Owner | None = None,
        audit_policy: Mapping[str, Any] | None = None,
        kube_version: str = versions.KUBERNETES_VERSION,
    ) -> None:
        self.state_root = state_root or cache.state_dir()
        # The Kubernetes release the cluster runs (one of versions.KUBERNETES_RELEASES).
        self.kube_version = kube_version
        # An audit policy (audit.k8s.io/v1 Policy) makes the API server log the requests it
        # selects to audit_log(cluster): the bench's timings. None: no audit log.
        self.audit_policy = audit_policy
        self.progress = progress
        self.tools: Callable[[], Mapping[str, pathlib.Path]] = tools or (lambda: install.paths(kube=kube_version))
        # The process a cluster started here belongs to (a run, a test session); None for one
        # started by hand (`vck cluster up`), which stays until `vck cluster down`.
        self.owner = owner

    # --- paths -----------------------------------------------------------------------------------
    def state_dir(self, cluster: str) -> pathlib.Path:
        return self.state_root / cluster

    def _kwok_workdir(self, cluster: str) -> pathlib.Path:
        return self.state_dir(cluster) / "kwok"

    def kubeconfig(self, cluster: str) -> pathlib.Path:
        # kwokctl writes this itself; the kit never touches the user's ~/.kube/config.
        return self._kwok_workdir(cluster) / "clusters" / cluster / "kubeconfig.yaml"

    def audit_log(self, cluster: str) -> pathlib.Path:
        """Where the API server writes its audit log (with an audit policy)."""
        return self._kwok_workdir(cluster) / "clusters" / cluster / "logs" / "audit.log"

    def _env(self, cluster: str) -> dict[str, str]:
        env = dict(os.environ)
        env["KWOK_WORKDIR"] = str(self._kwok_workdir(cluster))
        # kwokctl shapes the control plane's flags by the Kubernetes release it runs.
        env["KWOK_KUBE_VERSION"] = self.kube_version
        env.pop("KUBECONFIG", None)
        return env

    # --- protocol --------------------------------------------------------------------------------
    def up(self, cluster: str, groups: Sequence[nodes.NodeGroup]) -> base.ClusterHandle:
        _check_name(cluster)
        state = self.state_dir(cluster)
        if state.exists():
            return self._reuse(cluster, groups)
        if os.environ.get(NO_CLUSTERS_ENV):
            raise base.ClusterError(f"{NO_CLUSTERS_ENV} is set: no cluster may start here (mark a test that needs one `cluster`)")
        tools = self.tools()
        started = time.monotonic()
        try:
            # 0700: the folder will hold the cluster's credentials and the webhook's TLS key.
            state.mkdir(parents=True, mode=0o700)
            if self.owner is not None:
                owners.record(state, self.owner)
            self._create(cluster, tools)
            handle = base.ClusterHandle(name=cluster, backend=self.name, kubeconfig=self.kubeconfig(cluster), state_dir=state)
            api = kube.client(handle.kubeconfig)
            kube.wait_ready(api, API_READY_TIMEOUT_S)
            manifests = nodes.kwok_nodes(groups)
            names = kube.create_nodes(api, manifests)
            kube.wait_nodes_ready(api, names, NODES_READY_TIMEOUT_S)
            kube.wait_service_account(api, "default", API_READY_TIMEOUT_S)
        except base.ClusterError as err:
            logs = self._log_tails(cluster)
            self.progress(f"cluster {cluster}: start failed; cleaning up")
            self.down(cluster)
            raise base.ClusterError(f"{err}\n{logs}" if logs else str(err)) from err
        except BaseException:
            # Ctrl-C, a failed start or a timeout: leave no process and no state behind.
            self.progress(f"cluster {cluster}: start interrupted or failed; cleaning up")
            self.down(cluster)
            raise
        self.progress(f"cluster {cluster}: {len(names)} nodes Ready in {time.monotonic() - started:.1f}s")
        return handle

    def _create(self, cluster: str, tools: Mapping[str, pathlib.Path]) -> None:
        state = self.state_dir(cluster)
        config = state / "kwok-config.yaml"
        config.write_text(yaml.safe_dump_all([kwokctl_configuration(), *stage_documents()], sort_keys=False))
        argv = [
            str(tools["kwokctl"]),
            "create", "cluster",
            "--name", cluster,
            "--runtime", "binary",
            "--config", str(config),
            "--kubeconfig", "",
            "--disable", "kube-scheduler",
            "--kube-apiserver-binary", str(tools["kube-apiserver"]),
            "--kube-controller-manager-binary", str(tools["kube-controller-manager"]),
            "--etcd-binary", str(tools["etcd"]),
            "--kwok-controller-binary", str(tools["kwok"]),
            "--quiet-pull",
        ]
        if self.audit_policy is not None:
            policy = state / "audit-policy.yaml"
            policy.write_text(yaml.safe_dump(dict(self.audit_policy), sort_keys=False))
            argv += ["--kube-audit-policy", str(policy)]
        self.progress(f"cluster {cluster}: starting etcd, kube-apiserver, kube-controller-manager and kwok")
        log = state / "kwokctl.log"
        with open(log, "ab") as out:
            proc = subprocess.run(argv, env=self._env(cluster), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-20:])
            raise base.ClusterError(f"kwokctl create cluster {cluster} exited {proc.returncode}; last lines of {log}:\n{tail}")

    def _log_tails(self, cluster: str, lines: int = 8) -> str:
        """The last lines of each component's log, to say why a start failed."""
        out = []
        for log in sorted((self._kwok_workdir(cluster) / "clusters" / cluster / "logs").glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            if tail:
                out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)

    def _reuse(self, cluster: str, groups: Sequence[nodes.NodeGroup]) -> base.ClusterHandle:
        status = self.status(cluster)
        if not status.running:
            raise base.ClusterError(
                f"cluster {cluster} exists in {self.state_dir(cluster)} but is not healthy ({status.detail}); "
                f"remove it with `vck cluster down --name {cluster}` and start again"
            )
        handle = base.ClusterHandle(name=cluster, backend=self.name, kubeconfig=self.kubeconfig(cluster), reused=True, state_dir=self.state_dir(cluster))
        # Reuse adds the nodes the spec asks for that are missing; it never removes or changes one.
        api = kube.client(handle.kubeconfig)
        names = kube.create_nodes(api, nodes.kwok_nodes(groups))
        kube.wait_nodes_ready(api, names, NODES_READY_TIMEOUT_S)
        self.progress(f"cluster {cluster}: already running; reusing it (nodes {', '.join(names)} present)")
        return handle

    def down(self, cluster: str) -> None:
        _check_name(cluster)
        state = self.state_dir(cluster)
        if not state.exists():
            self.progress(f"cluster {cluster}: nothing to remove")
            return
        kwokctl = install.cached(_kwokctl())
        if kwokctl is not None and self._kwok_workdir(cluster).exists():
            subprocess.run(
                [str(kwokctl), "delete", "cluster", "--name", cluster, "--kubeconfig", ""],
                env=self._env(cluster), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=120,
            )
        # Whatever kwokctl did not stop (it may itself have been interrupted mid-start).
        processes.stop(processes.under(state))
        shutil.rmtree(state, ignore_errors=True)
        self.progress(f"cluster {cluster}: stopped and removed")

    def status(self, cluster: str) -> base.ClusterStatus:
        _check_name(cluster)
        state = self.state_dir(cluster)
        kubeconfig = self.kubeconfig(cluster)
        if not state.exists():
            return base.ClusterStatus(cluster, self.name, False, None, "not created")
        procs = processes.under(state)
        names = sorted({p.name for p in procs})
        if not kubeconfig.exists():
            return base.ClusterStatus(cluster, self.name, False, None, f"no kubeconfig; processes: {names}")
        try:
            kube.wait_ready(kube.client(kubeconfig), timeout_s=5)
        except base.ClusterError as err:
            return base.ClusterStatus(cluster, self.name, False, kubeconfig, f"API server not ready: {err}; processes: {names}")
        rss = sum(p.rss_bytes() for p in procs)
        return base.ClusterStatus(cluster, self.name, True, kubeconfig, f"processes: {', '.join(names)}; resident memory {rss / 2**20:.0f} MiB")

    def processes(self, cluster: str) -> list[processes.Process]:
        return processes.under(self.state_dir(cluster))

    def clusters(self) -> list[str]:
        """The names of every cluster with state under this backend's state folder."""
        if not self.state_root.is_dir():
            return []
        return sorted(p.name for p in self.state_root.iterdir() if p.is_dir() and nodes._NAME.match(p.name) and p.name not in RESERVED_NAMES)

    def owner_of(self, cluster: str) -> owners.Owner | None:
        return owners.read(self.state_dir(cluster))


# Folders of the state root that are not embedded clusters: the kind backend's (kind.KindBackend),
# the existing backend's (its kwok controllers) and the dev sessions' (conformance/dev).
RESERVED_NAMES = frozenset({"kind", "existing", "dev"})


def _kwokctl() -> versions.Component:
    return versions.component("kwokctl")


def _check_name(cluster: str) -> None:
    if not nodes._NAME.match(cluster) or len(cluster) > 40:
        raise base.ClusterError(f"cluster name {cluster!r} should be a DNS-1123 label of at most 40 characters (lower case, digits, '-')")
    if cluster in RESERVED_NAMES:
        raise base.ClusterError(f"cluster name {cluster!r} is taken: the kind backend keeps its clusters' state in that folder")
