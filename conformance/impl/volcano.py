"""`volcano[:VERSION]`: real Volcano (default v1.13.3), run as processes against the cluster.

vc-scheduler, vc-controller-manager and vc-webhook-manager are built from the `volcano.sh/volcano`
Go module into the toolchain cache on first use (or taken from `VCK_VOLCANO_BIN=DIR`; see
conformance.toolchain.volcano_resolve). The adapter installs Volcano's own CRDs from that module,
registers the webhook configurations the helm chart would (reached by URL over TLS, see
volcano_webhooks), and starts the three with leader election off and the scenario's scheduler
configuration, restarting the scheduler whenever that configuration changes. Its claims are in
`volcano_capabilities.yaml`, with the actions, plugins and job plugins that the release's own source
registers in place of the file's (volcano_release).

Flags, upstream: cmd/scheduler/app/options/options.go, cmd/controller-manager/app/options/
options.go, cmd/webhook-manager/app/options/options.go (leader election flags come from
k8s.io/component-base, bound in each cmd's main.go).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import pathlib
import re
from typing import Any, Callable, Mapping

import yaml

from conformance import data
from conformance.cluster import base, kube, ports
from conformance.impl import base as impl_base
from conformance.impl import (
    crds,
    processes,
    queues,
    three_parts,
    volcano_release,
    volcano_webhooks,
)
from conformance.scenario import releases
from conformance.toolchain import errors, versions, volcano_resolve, volcano_source
from conformance.toolchain import volcano as volcano_recipe

log = logging.getLogger(__name__)
SCHEDULER_NAME = "volcano"
# The first build of the scheduler's cache waits up to vc-scheduler's --resource-sync-timeout (60s).
READY_TIMEOUT_S = 120.0
CRD_TIMEOUT_S = 60.0
WEBHOOK_LIVE_TIMEOUT_S = 60.0
# klog lines each process writes once it acts on the cluster (at -v=2 and above).
# Upstream: pkg/scheduler/scheduler.go (Run), pkg/controllers/job/job_controller.go (Run).
SCHEDULER_READY = r"Scheduler completes Initialization and start to run"
CONTROLLER_READY = r"JobController is running"
LOG_LEVEL = "2"
CAPABILITIES_FILE = data.kit("impl", "volcano_capabilities.yaml")


@functools.cache
def claims() -> frozenset[str]:
    """What Volcano v1.13 claims, however it is run (this adapter, or installed from a chart); the
    adapter narrows or widens its actions and plugins to what the release registers."""
    doc = yaml.safe_load(CAPABILITIES_FILE.read_text())
    return frozenset(doc["capabilities"])


def release_claims(tag: str) -> frozenset[str]:
    """What a release installed from its chart or manifests claims: the file's claims narrowed by
    the release's source where it is at hand without building anything (Go's module cache, the
    module proxy, or a checkout through VCK_VOLCANO_GIT); the file's claims otherwise, and for a
    tag that is not a release (a CI build's)."""
    if releases.parse_release(tag) is None:
        return claims()
    try:
        source = volcano_resolve.source_dir(tag, lambda line: log.info("%s", line))
    except errors.ToolchainError as err:
        log.info("claims of Volcano %s from the file only: %s", tag, err)
        return claims()
    return volcano_release.claims(claims(), source)


class Volcano(three_parts.ThreeParts):
    display = "Volcano"

    def __init__(self, version: str = versions.VOLCANO_VERSION, workdir: pathlib.Path | None = None, source: pathlib.Path | None = None) -> None:
        # VCK_VOLCANO_WORKDIR keeps the logs where a caller (or a test) can read them.
        super().__init__("VCK_VOLCANO_WORKDIR", "volcano", workdir)
        # A source tree to build (`volcano:src=PATH`) instead of a release.
        self._tree: volcano_source.Tree | None = None
        try:
            if source is not None:
                self._tree = volcano_source.checkout_tree(source)
                version = self._tree.stamp
            else:
                version = volcano_recipe.check_version(version)
        except errors.ToolchainError as err:
            raise impl_base.ImplementationError(str(err)) from err
        self.version = version
        if source is not None:
            self.name = f"volcano:src={source}"
        else:
            self.name = "volcano" if version == versions.VOLCANO_VERSION else f"volcano:{version}"
        self._bins: dict[str, pathlib.Path] | None = None
        self._source: pathlib.Path | None = None
        self._kubeconfig: pathlib.Path | None = None
        self._conf_key: str | None = None
        self._wait_default_queues = queues.DefaultQueueWait()
        self._claims: frozenset[str] | None = None

    # --- claims -----------------------------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        """The file's claims, with the actions, plugins and job plugins the release registers
        (read from its source once it is resolved; the binaries are cached by then, as `prepare`
        built them). A release that cannot be resolved claims the file's list: starting it fails
        again, and that is what the scenario reports."""
        if self._claims is None:
            try:
                self._resolve()
            except impl_base.ImplementationError as err:
                log.debug("claims of %s from the file only: %s", self.name, err)
                self._claims = claims()  # once: every scenario asks, and ensure() meets the error again
            else:
                # None with VCK_VOLCANO_CRDS (the source is not looked for): the file's claims.
                self._claims = volcano_release.claims(claims(), self._source)
        return self._claims

    def versions(self) -> dict[str, str]:
        return {"implementation": f"volcano {self.version}", "release": self.version}

    def volcano_release(self) -> str | None:
        """The release tag, or for a source tree the tag `git describe` starts from."""
        found = re.match(r"v\d+\.\d+\.\d+(-(alpha|beta|rc)\.\d+)?", self.version)
        return found.group(0) if found else None

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
        if self._running(three_parts.WEBHOOK) is None:
            self._parts[three_parts.WEBHOOK] = self._start_webhook(cluster)
        if self._running(impl_base.CONTROLLER) is None:
            # No --controllers: each release's own default, as its chart leaves it ("*" up to
            # v1.13; "*,-sharding-controller" from v1.14, cmd/controller-manager/app/options).
            launch = three_parts.Launch(("vc-controller-manager", "--scheduler-name", SCHEDULER_NAME), CONTROLLER_READY)
            self._start(impl_base.CONTROLLER, launch).wait_ready(launch.ready, READY_TIMEOUT_S)
        conf = dict(scheduler_conf or impl_base.DEFAULT_SCHEDULER_CONF)
        key = json.dumps(conf, sort_keys=True)
        scheduler = self._parts[impl_base.SCHEDULER]
        if self._running(impl_base.SCHEDULER) is not None and key == self._conf_key:
            return
        if scheduler is not None:
            scheduler.stop()
        conf_path = self.workdir / "scheduler-conf" / "volcano-scheduler.conf"
        conf_path.parent.mkdir(parents=True, exist_ok=True)
        conf_path.write_text(yaml.safe_dump(conf, sort_keys=False))
        launch = three_parts.Launch(
            ("vc-scheduler", "--scheduler-name", SCHEDULER_NAME, "--scheduler-conf", str(conf_path), "--cache-dumper=false", "--cache-dump-dir", str(self.workdir),
             *(f"--node-selector={item}" for item in cluster.node_selector)),
            SCHEDULER_READY,
        )
        self._start(impl_base.SCHEDULER, launch).wait_ready(launch.ready, READY_TIMEOUT_S)
        self._conf_key = key
        # vc-scheduler creates the default queue and the queue controller opens it; until then
        # Volcano's webhook refuses Jobs sent to it.
        self._wait_default_queues(cluster)

    def kubernetes_version(self) -> str | None:
        """The Kubernetes release this Volcano was built against (its go.mod's k8s.io/kubernetes):
        a run judges it on that minor unless told otherwise. None when the source is not at hand."""
        self._resolve()
        gomod = (self._source / "go.mod") if self._source is not None else None
        if gomod is None or not gomod.is_file():
            return None
        found = re.search(r"^\s*k8s\.io/kubernetes\s+(v\d+\.\d+\.\d+)", gomod.read_text(), re.MULTILINE)
        return found.group(1) if found else None

    def prepare(self, progress: Callable[[str], None]) -> None:
        """Build the binaries into the cache (minutes, the first time), before any worker starts:
        `vck run` calls this once, where the build's progress is seen and its time is the run's
        setup; each worker then finds them cached."""
        self._resolve(progress)

    def _resolve(self, progress: Callable[[str], None] | None = None) -> None:
        """Binaries (built on first use) and the module's source (CRDs, the chart's admissions)."""
        if self._bins is not None:
            return
        said = progress or (lambda line: log.info("%s", line))
        try:
            if self._tree is not None:
                self._bins = volcano_source.binaries(self._tree, progress=said)
                self._source = self._tree.path
            else:
                self._bins = volcano_resolve.binaries(self.version, progress=said)
                if not os.environ.get(volcano_resolve.CRDS_ENV):
                    self._source = volcano_resolve.source_dir(self.version, said)
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

    def _spawn(self, part: str, launch: three_parts.Launch) -> processes.ManagedProcess:
        binary, *args = launch.args
        return self._launch(binary, list(args))

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
            files = volcano_resolve.crd_files(self.version, source=self._source)
        except errors.ToolchainError as err:
            raise impl_base.ImplementationError(str(err)) from err
        crds.install(kube.client(cluster.kubeconfig, cluster.context), files, f"Volcano {self.version}", CRD_TIMEOUT_S)

    def _forget(self) -> None:
        self._conf_key = None

    def _unregister_webhook(self, cluster: base.ClusterHandle) -> None:
        try:
            volcano_webhooks.unregister(kube.client(cluster.kubeconfig, cluster.context))
        except Exception as err:  # the cluster may already be gone
            log.debug("webhook cleanup: %s", err)

    def logs(self) -> dict[str, pathlib.Path]:
        """Each process's log (`<binary>.log` in the workdir), also after the processes stopped."""
        return {f"volcano {path.stem}": path for path in sorted(self.workdir.glob("*.log"))}
