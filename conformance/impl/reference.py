"""`reference`: the kit's reference controller and scheduler (`reference_scheduler/`), run as
processes against the cluster with the flags vc-scheduler takes.

The adapter treats it as a black box: it installs its CRDs from the package's `crds/` folder and
reads its claims from `capabilities.yaml`, and never imports its code.

`reference:broken=gang,enqueue` is the same implementation with the named plugins and actions
taken out of every scheduler configuration it is given, while it still claims them: the broken
build each suite must be proven to fail against. Names of controller features (policies,
job-plugins, dependson, ttl, commands, elastic, network-topology, volumes, queue, podgroup, cronjob, jobflow, hypernode) switch those off in the controller, and
`admission` / `defaults` take validation or defaulting out of the webhook; scheduling-gates,
topology-aware-preemption and preemptable-label switch those rules off in the scheduler.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import pathlib
import re
import signal
import sys
from typing import Any, Mapping, Sequence

import kubernetes
import yaml

from conformance import data
from conformance.cluster import base, kube
from conformance.impl import base as impl_base
from conformance.impl import crds, processes, queues, three_parts

log = logging.getLogger(__name__)
READY_TIMEOUT_S = 60.0
CRD_TIMEOUT_S = 60.0
SCHEDULER_NAME = "volcano"
# Each process logs this once its caches are synced and it acts on the cluster.
READY_MARKER = r"\bready\b"
CONTROLLER_FEATURES = ("policies", "job-plugins", "dependson", "ttl", "commands", "elastic", "network-topology", "volumes", "queue", "podgroup", "cronjob", "jobflow", "hypernode")
WEBHOOK_FEATURES = {"admission": "validation", "defaults": "defaults"}
# Scheduler rules with no conf name of their own, switched off by the scheduler's --disable
# (reference_scheduler/scheduler/features.py).
SCHEDULER_FEATURES = ("scheduling-gates", "topology-aware-preemption", "preemptable-label")


def package_dir() -> pathlib.Path:
    try:
        return data.reference()
    except data.DataMissing as err:
        raise impl_base.ImplementationError(str(err)) from err


def without(conf: Mapping[str, Any], broken: Sequence[str]) -> dict[str, Any]:
    """The conf with the named actions and plugins removed."""
    out = copy.deepcopy(dict(conf))
    actions = [a.strip() for a in str(out.get("actions", "")).split(",") if a.strip()]
    out["actions"] = ", ".join(a for a in actions if a not in broken)
    out["tiers"] = [{**tier, "plugins": [p for p in tier.get("plugins") or [] if p.get("name") not in broken]} for tier in out.get("tiers") or []]
    return out


# What the reference scheduler logs when a changed conf file does not load (it keeps the old one).
CONF_REFUSED = r"scheduler conf .+? does not load"


def conf_loaded(text: str) -> str:
    """The line the reference scheduler logs once it runs the conf whose file holds `text`. The
    adapter drives the scheduler as a black box, by its log: this mirrors the line
    reference_scheduler/scheduler/conf_watch.py writes (tests/reference/scheduler/test_conf_watch.py holds
    the two together)."""
    return f"scheduler conf loaded (sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]})"


# The reference scheduler's log line after the first bind of a gang of two or more.
GANG_FIRST_BIND = r"bound .* \(gang .*: 1 of ([2-9]|[1-9][0-9]+)\)"


@functools.cache
def _claims() -> dict[str, Any]:
    """The reference's claims file, read once per process (every scenario asks for its release)."""
    return dict(yaml.safe_load((package_dir() / "capabilities.yaml").read_text()))


def known_broken() -> tuple[str, ...]:
    """Every name `reference:broken=` takes: the reference's actions and plugins (from its claims
    file), its controller features and its webhook checks."""
    doc = _claims()
    parts = [c.partition(":")[2] for c in doc["capabilities"] if c.startswith(("action:", "plugin:"))]
    return tuple(sorted({*parts, *CONTROLLER_FEATURES, *WEBHOOK_FEATURES, *SCHEDULER_FEATURES}))


class Reference(three_parts.ThreeParts):
    display = "the reference"

    def __init__(self, broken: Sequence[str] = (), workdir: pathlib.Path | None = None, chaos_seed: int | None = None, scheduler_chaos_seed: int | None = None) -> None:
        super().__init__("VCK_REFERENCE_WORKDIR", "reference", workdir)
        self.broken = tuple(broken)
        # With a seed, the controller runs under conformance.impl.chaos: killed and restarted at
        # random moments, to prove it is restart-safe.
        self.chaos_seed = chaos_seed
        # The same for the scheduler, which is also killed right after the first bind of a gang.
        self.scheduler_chaos_seed = scheduler_chaos_seed
        # The scheduler conf the running scheduler was given, as written to its file.
        self._conf_text: str | None = None
        self._wait_default_queues = queues.DefaultQueueWait()

    @property
    def broken(self) -> tuple[str, ...]:
        return self._broken

    @broken.setter
    def broken(self, names: Sequence[str]) -> None:
        """Which features are switched off; the next `ensure` restarts only the processes this
        changes (a scheduler plugin or action only changes the scheduler's conf)."""
        unknown = sorted(set(names) - set(known_broken()))
        if unknown:
            raise impl_base.ImplementationError(f"reference:broken={','.join(names)}: unknown {', '.join(unknown)}; known: {', '.join(known_broken())}")
        self._broken = tuple(names)

    @property
    def name(self) -> str:
        return (
            "reference"
            + (f":broken={','.join(self.broken)}" if self.broken else "")
            + (f":chaos={self.chaos_seed}" if self.chaos_seed is not None else "")
            + (f":scheduler-chaos={self.scheduler_chaos_seed}" if self.scheduler_chaos_seed is not None else "")
        )

    # --- claims -----------------------------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        doc = _claims()
        return frozenset(doc["capabilities"])

    def versions(self) -> dict[str, str]:
        doc = _claims()
        return {"implementation": f"reference {doc.get('version', 'dev')}", "release": str(doc.get("release", "unknown"))}

    def volcano_release(self) -> str | None:
        """The Volcano release the reference models (its claims file's `release`)."""
        doc = _claims()
        return str(doc["release"]) if doc.get("release") else None

    # --- lifecycle --------------------------------------------------------------------------------
    def _webhook_args(self, cluster: base.ClusterHandle) -> list[str]:
        disabled = ",".join(WEBHOOK_FEATURES[b] for b in self.broken if b in WEBHOOK_FEATURES)
        return [
            "-m", "reference_scheduler.webhooks", "--kubeconfig", str(self._kubeconfig(cluster)), "--scheduler-name", SCHEDULER_NAME,
            "--cert-dir", str(self.workdir / "webhook-certs"), "--disable", disabled, "--host", cluster.host_address,
        ]

    def _controller_args(self, cluster: base.ClusterHandle) -> list[str]:
        disabled = ",".join(b for b in self.broken if b in CONTROLLER_FEATURES)
        args = ["-m", "reference_scheduler.controllers", "--kubeconfig", str(self._kubeconfig(cluster)), "--scheduler-name", SCHEDULER_NAME, "--disable", disabled]
        if self.chaos_seed is not None:
            # Each life at least 2 s after ready: on a loaded machine a restarted controller's first
            # two passes (a plain sync, then the policies) take over a second, and lives shorter
            # than that would let no delayed action through at all, restart-safe or not.
            args = ["-m", "conformance.impl.chaos", "--seed", str(self.chaos_seed), "--min-s", "2", "--max-s", "5", "--", sys.executable, *args]
        return args

    def _scheduler_args(self, cluster: base.ClusterHandle, conf_path: pathlib.Path) -> list[str]:
        args = ["-m", "reference_scheduler.scheduler", "--kubeconfig", str(self._kubeconfig(cluster)), "--scheduler-conf", str(conf_path), "--scheduler-name", SCHEDULER_NAME]
        args += [f"--node-selector={item}" for item in cluster.node_selector]
        disabled = ",".join(b for b in self.broken if b in SCHEDULER_FEATURES)
        if disabled:
            args += ["--disable", disabled]
        if self.scheduler_chaos_seed is not None:
            chaos = ["-m", "conformance.impl.chaos", "--seed", str(self.scheduler_chaos_seed), "--min-s", "2", "--max-s", "6", "--kill-on", GANG_FIRST_BIND]
            args = [*chaos, "--", sys.executable, *args]
        return args

    def _kubeconfig(self, cluster: base.ClusterHandle) -> pathlib.Path:
        # The reference's processes take no --context flag.
        return kube.kubeconfig_selecting(cluster.kubeconfig, cluster.context, self.workdir)

    def _current(self, part: str, args: list[str]) -> processes.ManagedProcess | None:
        """The part when it runs with these arguments; otherwise None, after stopping it."""
        proc = self._parts[part]
        if proc is not None and not proc.exited() and list(proc.argv) == [sys.executable, *args]:
            return proc
        if proc is not None:
            proc.stop()
        self._parts[part] = None
        return None

    def ensure(self, cluster: base.ClusterHandle, scheduler_conf: Mapping[str, Any] | None) -> None:
        if self._cluster != cluster:
            self.stop()
            self._cluster = cluster
            self.workdir = self._workdirs.for_cluster(cluster)
            self._install_crds(cluster)
        webhook_args = self._webhook_args(cluster)
        if self._current(three_parts.WEBHOOK, webhook_args) is None:
            # First, and on its own: the scheduler creates the default queue, which the webhook
            # must already see to default it.
            self._start(three_parts.WEBHOOK, three_parts.Launch(tuple(webhook_args), READY_MARKER)).wait_ready(READY_MARKER, READY_TIMEOUT_S)
        starting: list[processes.ManagedProcess] = []
        controller_args = self._controller_args(cluster)
        if self._current(impl_base.CONTROLLER, controller_args) is None:
            starting.append(self._start(impl_base.CONTROLLER, three_parts.Launch(tuple(controller_args), READY_MARKER)))
        conf_path = self.workdir / "volcano-scheduler.conf"
        text = yaml.safe_dump(without(scheduler_conf or impl_base.DEFAULT_SCHEDULER_CONF, self.broken), sort_keys=False)
        scheduler_args = self._scheduler_args(cluster, conf_path)
        scheduler = self._current(impl_base.SCHEDULER, scheduler_args)
        if scheduler is None or text != self._conf_text:
            since = scheduler.log_size() if scheduler is not None else 0
            # Written whole, then renamed: the scheduler never reads half a file.
            partial = conf_path.with_suffix(".partial")
            partial.write_text(text, encoding="utf-8")
            partial.replace(conf_path)
            # Known loaded only once the scheduler says so: a reload that failed is tried again.
            self._conf_text = None
            if scheduler is None:
                starting.append(self._start(impl_base.SCHEDULER, three_parts.Launch(tuple(scheduler_args), READY_MARKER)))
            else:
                # The scheduler reads its conf file again when it changes, as vc-scheduler does;
                # SIGHUP has it look now. The log names the digest of the conf it loaded.
                scheduler.signal(signal.SIGHUP)
                scheduler.wait_ready(f"{re.escape(conf_loaded(text))}|{CONF_REFUSED}", READY_TIMEOUT_S, since)
                if re.search(CONF_REFUSED, scheduler.log_since(since)):
                    raise impl_base.ImplementationError(f"the reference scheduler refused the conf:\n{scheduler.tail()}")
        # The controller and the scheduler start side by side.
        for proc in starting:
            proc.wait_ready(READY_MARKER, READY_TIMEOUT_S)
        self._conf_text = text
        # The scheduler creates the default queue and the controller opens it; until then the
        # webhook refuses Jobs, as Volcano's does. A build without the queue controller would only
        # spend the whole deadline: nothing is going to open it.
        if "queue" not in self.broken:
            self._wait_default_queues(cluster)

    def _spawn(self, part: str, launch: three_parts.Launch) -> processes.ManagedProcess:
        proc = processes.ManagedProcess(f"reference {part}", [sys.executable, *launch.args], self.workdir / f"{part}.log")
        proc.start()
        return proc

    def _install_crds(self, cluster: base.ClusterHandle) -> None:
        crds.install(kube.client(cluster.kubeconfig, cluster.context), sorted((package_dir() / "crds").glob("*.yaml")), "the reference", CRD_TIMEOUT_S)

    def _forget(self) -> None:
        self._conf_text = None

    def _unregister_webhook(self, cluster: base.ClusterHandle) -> None:
        """The webhook removes its configurations when it stops; if it died, a leftover one
        (failure policy Fail) would refuse every Job, so remove them here too."""
        try:
            adm = kubernetes.client.AdmissionregistrationV1Api(kube.client(cluster.kubeconfig, cluster.context))
            for delete, name in ((adm.delete_mutating_webhook_configuration, "vck-reference-mutate"), (adm.delete_validating_webhook_configuration, "vck-reference-validate")):
                try:
                    delete(name)
                except kubernetes.client.ApiException as err:
                    if err.status != 404:
                        raise
        except Exception as err:  # the cluster may already be gone
            log.debug("webhook cleanup: %s", err)

    def logs(self) -> dict[str, pathlib.Path]:
        """Each process's log, by its name, also after the processes stopped."""
        return {f"reference {part}": self.workdir / f"{part}.log" for part in three_parts.PARTS if (self.workdir / f"{part}.log").exists()}
