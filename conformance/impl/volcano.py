"""`volcano[:VERSION]`: real Volcano (default v1.13.3), run as processes against the cluster.

vc-scheduler, vc-controller-manager and vc-webhook-manager are built from the `volcano.sh/volcano`
Go module into the toolchain cache on first use (or taken from `VCK_VOLCANO_BIN=DIR`; see
conformance.toolchain.volcano_resolve). The adapter installs Volcano's own CRDs from that module,
registers the webhook configurations the helm chart would (reached by URL over TLS, see
volcano_webhooks), and starts the three with leader election off and the scenario's scheduler
configuration, restarting the scheduler whenever that configuration changes. Its claims are in
`volcano_capabilities.yaml`.

Flags, upstream: cmd/scheduler/app/options/options.go, cmd/controller-manager/app/options/
options.go, cmd/webhook-manager/app/options/options.go (leader election flags come from
k8s.io/component-base, bound in each cmd's main.go).
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
from typing import Any, Callable, Collection, Mapping

import yaml

from conformance.cluster import base, kube, ports
from conformance.impl import base as impl_base
from conformance.impl import crds, processes, queues, volcano_webhooks
from conformance.toolchain import errors, versions, volcano_resolve
from conformance.toolchain import volcano as volcano_recipe

log = logging.getLogger(__name__)
SCHEDULER_NAME = "volcano"
# The first build of the scheduler's cache waits up to vc-scheduler's --resource-sync-timeout (60s).
READY_TIMEOUT_S = 120.0
# A held part starts over a whole workload (tens of thousands of pods to list into its caches).
RESUME_READY_TIMEOUT_S = 600.0
CRD_TIMEOUT_S = 60.0
WEBHOOK_LIVE_TIMEOUT_S = 60.0
# klog lines each process writes once it acts on the cluster (at -v=2 and above).
# Upstream: pkg/scheduler/scheduler.go (Run), pkg/controllers/job/job_controller.go (Run).
SCHEDULER_READY = r"Scheduler completes Initialization and start to run"
CONTROLLER_READY = r"JobController is running"
LOG_LEVEL = "2"
CAPABILITIES_FILE = pathlib.Path(__file__).with_name("volcano_capabilities.yaml")


def claims() -> frozenset[str]:
    """What Volcano v1.13 claims, however it is run (this adapter, or installed from a chart)."""
    doc = yaml.safe_load(CAPABILITIES_FILE.read_text())
    return frozenset(doc["capabilities"])


class Volcano:
    def __init__(self, version: str = versions.VOLCANO_VERSION, workdir: pathlib.Path | None = None) -> None:
        try:
            self.version = volcano_recipe.check_version(version)
        except errors.ToolchainError as err:
            raise impl_base.ImplementationError(str(err)) from err
        self.name = "volcano" if version == versions.VOLCANO_VERSION else f"volcano:{version}"
        # Where the processes' logs, conf and certificates go (impl_base.Workdir); VCK_VOLCANO_WORKDIR
        # keeps the logs where a caller (or a test) can read them.
        self._workdirs = impl_base.Workdir("VCK_VOLCANO_WORKDIR", "volcano", workdir)
        self.workdir = pathlib.Path("(not started)")
        self._bins: dict[str, pathlib.Path] | None = None
        self._source: pathlib.Path | None = None
        self._cluster: base.ClusterHandle | None = None
        self._kubeconfig: pathlib.Path | None = None
        self._conf_key: str | None = None
        self._wait_default_queues = queues.DefaultQueueWait()
        self._webhook: processes.ManagedProcess | None = None
        self._controller: processes.ManagedProcess | None = None
        self._scheduler: processes.ManagedProcess | None = None
        # How each part was last started (binary, arguments, readiness line), and which are held.
        self._started_as: dict[str, tuple[str, list[str], str]] = {}
        self._held: set[str] = set()

    # --- claims -----------------------------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        return claims()

    def versions(self) -> dict[str, str]:
        return {"implementation": f"volcano {self.version}"}

    # --- lifecycle --------------------------------------------------------------------------------
    def ensure(self, cluster: base.ClusterHandle, scheduler_conf: Mapping[str, Any] | None) -> None:
        if self._cluster != cluster:
            self.stop()
            self._resolve()
            self._cluster = cluster
            self.workdir = self._workdirs.for_cluster(cluster)
            # The Volcano binaries take no --context flag.
            self._kubeconfig = kube.kubeconfig_selecting(cluster.kubeconfig, cluster.context, self.workdir)
            self._install_crds(cluster)
        if self._webhook is None or self._webhook.exited():
            self._webhook = self._start_webhook(cluster)
        if self._controller is None or self._controller.exited():
            self._controller = self._start_part(impl_base.CONTROLLER, "vc-controller-manager", ["--scheduler-name", SCHEDULER_NAME, "--controllers", "*"], CONTROLLER_READY)
        conf = dict(scheduler_conf or impl_base.DEFAULT_SCHEDULER_CONF)
        key = json.dumps(conf, sort_keys=True)
        if self._scheduler is not None and not self._scheduler.exited() and key == self._conf_key:
            return
        if self._scheduler is not None:
            self._scheduler.stop()
        conf_path = self.workdir / "scheduler-conf" / "volcano-scheduler.conf"
        conf_path.parent.mkdir(parents=True, exist_ok=True)
        conf_path.write_text(yaml.safe_dump(conf, sort_keys=False))
        self._scheduler = self._start_part(
            impl_base.SCHEDULER,
            "vc-scheduler",
            ["--scheduler-name", SCHEDULER_NAME, "--scheduler-conf", str(conf_path), "--cache-dumper=false", "--cache-dump-dir", str(self.workdir),
             *(f"--node-selector={item}" for item in cluster.node_selector)],
            SCHEDULER_READY,
        )
        self._conf_key = key
        # vc-scheduler creates the default queue and the queue controller opens it; until then
        # Volcano's webhook refuses Jobs sent to it.
        self._wait_default_queues(cluster)

    def prepare(self, progress: Callable[[str], None]) -> None:
        """Build the binaries into the cache (minutes, the first time), before any worker starts:
        `vck run` calls this once, where the build's progress is seen and its time is the run's
        setup; each worker then finds them cached."""
        self._resolve(progress)

    def _resolve(self, progress: Callable[[str], None] | None = None) -> None:
        """Binaries (built on first use) and the module's source (CRDs, the chart's admissions)."""
        if self._bins is not None:
            return
        try:
            if progress is None:
                self._bins = volcano_resolve.binaries(self.version)
            else:
                self._bins = volcano_resolve.binaries(self.version, progress=progress)
            if not os.environ.get(volcano_resolve.CRDS_ENV):
                self._source = volcano_resolve.source_dir(self.version)
        except errors.ToolchainError as err:
            raise impl_base.ImplementationError(f"volcano {self.version}: {err}") from err

    def _argv(self, binary: str, args: list[str]) -> list[str]:
        assert self._bins is not None and self._kubeconfig is not None
        return [str(self._bins[binary]), "--kubeconfig", str(self._kubeconfig), f"-v={LOG_LEVEL}", *args]

    def _env(self) -> dict[str, str]:
        # vc-scheduler opens a log-level socket in DEBUG_SOCKET_DIR (default /tmp/klog-socks);
        # keep it inside this run's folder.
        return {**os.environ, "DEBUG_SOCKET_DIR": str(self.workdir / "klog-socks")}

    def _launch(self, binary: str, args: list[str]) -> processes.ManagedProcess:
        argv = self._argv(binary, ["--leader-elect=false", *args])
        proc = processes.ManagedProcess(f"volcano {binary}", argv, self.workdir / f"{binary}.log")
        proc.start(self._env())
        return proc

    def _start_part(self, part: str, binary: str, args: list[str], marker: str) -> processes.ManagedProcess:
        self._started_as[part] = (binary, args, marker)
        proc = self._launch(binary, args)
        proc.wait_ready(marker, READY_TIMEOUT_S)
        return proc

    # --- held parts (impl_base.Staged, for the bench) ------------------------------------------------
    def hold(self, parts: Collection[str]) -> None:
        for part in parts:
            if part not in (impl_base.SCHEDULER, impl_base.CONTROLLER):
                raise impl_base.ImplementationError(f"Volcano has no part {part!r} to hold; it holds {impl_base.SCHEDULER} and {impl_base.CONTROLLER}")
            proc = self._scheduler if part == impl_base.SCHEDULER else self._controller
            if proc is None or proc.exited():
                raise impl_base.ImplementationError(f"Volcano's {part} is not running: nothing to hold (ensure() first)")
            proc.stop()
            self._held.add(part)

    def resume(self) -> None:
        started = []
        for part in sorted(self._held):
            binary, args, marker = self._started_as[part]
            proc = self._launch(binary, args)
            if part == impl_base.SCHEDULER:
                self._scheduler = proc
            else:
                self._controller = proc
            started.append((proc, marker))
        self._held.clear()
        for proc, marker in started:
            proc.wait_ready(marker, RESUME_READY_TIMEOUT_S)

    def _start_webhook(self, cluster: base.ClusterHandle) -> processes.ManagedProcess:
        api = kube.client(cluster.kubeconfig, cluster.context)
        # Where the cluster's API server reaches this machine (127.0.0.1 embedded).
        host = cluster.host_address
        tls = volcano_webhooks.make_tls(self.workdir / "webhook-certs", host)
        (port,) = ports.reserve(1)
        url = f"https://{host}:{port}"
        paths = volcano_webhooks.enabled_admissions(self._source)
        # The manager waits for these to exist before it serves (it only fills in CA bundles).
        volcano_webhooks.register(api, paths, url, tls.ca_pem())
        argv = self._argv(
            "vc-webhook-manager",
            [
                "--tls-cert-file", str(tls.cert), "--tls-private-key-file", str(tls.key), "--ca-cert-file", str(tls.ca),
                "--listen-address", host, "--port", str(port), "--webhook-url", url,
                "--enabled-admission", ",".join(paths), "--scheduler-name", SCHEDULER_NAME,
                "--graceful-shutdown-time", "5s",
            ],
        )
        proc = processes.ManagedProcess("volcano vc-webhook-manager", argv, self.workdir / "vc-webhook-manager.log")
        proc.start(self._env())

        def gone() -> str | None:
            return f"vc-webhook-manager exited while starting:\n{proc.tail()}" if proc.exited() else None

        try:
            volcano_webhooks.wait_live(api, WEBHOOK_LIVE_TIMEOUT_S, gone)
        except (RuntimeError, TimeoutError) as err:
            proc.stop()
            volcano_webhooks.unregister(api)
            raise impl_base.ImplementationError(f"{err}\n{proc.tail()}") from err
        return proc

    def _install_crds(self, cluster: base.ClusterHandle) -> None:
        try:
            files = volcano_resolve.crd_files(self.version)
        except errors.ToolchainError as err:
            raise impl_base.ImplementationError(str(err)) from err
        crds.install(kube.client(cluster.kubeconfig, cluster.context), files, f"Volcano {self.version}", CRD_TIMEOUT_S)

    def health(self) -> str | None:
        return processes.first_exited((self._webhook, self._controller, self._scheduler))

    def release(self) -> None:
        """Remove a private folder of logs (an existing cluster's), once they are copied."""
        self._workdirs.release()

    def stop(self) -> None:
        for proc in (self._scheduler, self._controller, self._webhook):
            if proc is not None:
                proc.stop()
        if self._webhook is not None and self._cluster is not None:
            try:
                volcano_webhooks.unregister(kube.client(self._cluster.kubeconfig, self._cluster.context))
            except Exception as err:  # the cluster may already be gone
                log.debug("webhook cleanup: %s", err)
        self._scheduler = self._controller = self._webhook = None
        self._held.clear()
        self._conf_key = None
        self._cluster = None

    def logs(self) -> dict[str, pathlib.Path]:
        """Each process's log (`<binary>.log` in the workdir), also after the processes stopped."""
        return {f"volcano {path.stem}": path for path in sorted(self.workdir.glob("*.log"))}
