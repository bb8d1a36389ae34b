"""The existing backend: any cluster reachable through a kubeconfig and context. The kit never
creates or deletes the cluster: `up` checks it answers, then gives it the node spec's nodes as
kwok nodes driven from this machine (kwok_controller.py), as on kind; `down` removes those nodes
and stops that controller, and nothing else.

An implementation's webhook running on this machine must be reachable from the cluster's API
server: `host_address` is this machine's address as the cluster sees it (default: the local
address of a connection to the API server, right for a cluster on another machine; a kind
cluster reached by kubeconfig needs kind's Docker network gateway instead).

With `lend_nodes` (`--lend-nodes N`) the cluster's own nodes run the containers of the scenarios
that ask for real ones (`real_nodes`): N of its Ready, schedulable, untainted workers, each
labelled as lent (nodes.LENT_NODE_LABEL) for a scenario's time, the label taken off by `down`.
The images those scenarios run must be pullable there (`--workload-images`): the kit cannot load
the images it builds into someone else's nodes.

What the kit leaves there is recorded in its state folder (`existing.json`: the kubeconfig, the
context, how many nodes it lends; `owner.json`: the run it belongs to), so that `vck cluster list`
shows it and `vck cluster prune` takes it back (its kwok controller stopped, its nodes deleted,
the lent label taken off) once a run killed with -9 is gone, as for the kit's own clusters.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import shutil
import socket
import sys
import urllib.parse
from typing import Callable, Mapping, Sequence

import kubernetes
import yaml

from conformance.cluster import (
    base,
    embedded,
    kube,
    kwok_controller,
    nodes,
    owners,
    processes,
)
from conformance.toolchain import cache, install

READY_TIMEOUT_S = 30.0
NODES_READY_TIMEOUT_S = 120.0
# The preflight gives an unreachable API server this long before it says so.
PREFLIGHT_TIMEOUT_S = 15.0
Progress = Callable[[str], None]
# What a cluster's state folder says about the cluster the kit used (Used).
RECORD_FILE = "existing.json"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclasses.dataclass(frozen=True)
class Used:
    """The cluster a state folder's kwok controller and nodes are in: enough for `down` alone. The
    context by its name and the API server by its address, as they were: a kubeconfig's current
    context may have moved to another cluster since."""

    kubeconfig: str
    context: str
    server: str
    lend_nodes: int

    @classmethod
    def read(cls, state: pathlib.Path) -> Used | None:
        try:
            data = json.loads((state / RECORD_FILE).read_text())
            return cls(str(data["kubeconfig"]), str(data["context"]), str(data["server"]), int(data.get("lend_nodes", 0)))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def write(self, state: pathlib.Path) -> None:
        """Whole or not at all (a kill while writing leaves the old file or none)."""
        partial = state / f".{RECORD_FILE}.partial"
        partial.write_text(json.dumps(dataclasses.asdict(self)) + "\n")
        os.replace(partial, state / RECORD_FILE)

    def problem(self) -> str:
        """Why the recorded cluster cannot be reached as it was ('' when it can): the kubeconfig
        gone, the context gone, or the context now naming another API server."""
        if not pathlib.Path(self.kubeconfig).is_file():
            return f"its kubeconfig {self.kubeconfig} is gone"
        try:
            configuration = kubernetes.client.Configuration()
            kubernetes.config.load_kube_config(config_file=self.kubeconfig, context=self.context, client_configuration=configuration)
        except (kubernetes.config.ConfigException, ValueError, TypeError, KeyError, AttributeError) as err:
            return f"context {self.context!r} of {self.kubeconfig} cannot be used: {err}"
        if configuration.host != self.server:
            return f"context {self.context!r} of {self.kubeconfig} now names {configuration.host}, not {self.server}"
        return ""


class ExistingBackend:
    name = "existing"

    def __init__(
        self,
        kubeconfig: pathlib.Path | None = None,
        context: str | None = None,
        host_address: str | None = None,
        state_root: pathlib.Path | None = None,
        progress: Progress = _stderr,
        tools: Callable[[], Mapping[str, pathlib.Path]] = install.paths,
        lend_nodes: int = 0,
        owner: owners.Owner | None = None,
    ) -> None:
        self._given = kubeconfig is not None
        self.kubeconfig = kubeconfig or _default_kubeconfig()
        self.context = context
        self.host_address = host_address
        self.state_root = state_root or cache.state_dir() / "existing"
        self.progress = progress
        self.tools = tools
        self.lend_nodes = lend_nodes
        # The process what `up` leaves belongs to (see owners.py); None: kept until `down`.
        self.owner = owner

    @classmethod
    def recorded(cls, state_root: pathlib.Path | None, cluster: str, progress: Progress = _stderr) -> ExistingBackend:
        """The backend as the run that left `cluster` had it (its record), to take it back;
        ClusterError when the record cannot be read or no longer reaches that cluster (what the
        run left is then the user's to remove: the record stays, saying where)."""
        state = cls(state_root=state_root).state_dir(cluster)
        used = Used.read(state)
        if used is None:
            raise base.ClusterError(f"existing backend: {state / RECORD_FILE} cannot be read")
        problem = used.problem()
        if problem:
            raise base.ClusterError(f"existing backend: what {cluster} left on {used.server} (context {used.context}) is kept: {problem}")
        return cls(pathlib.Path(used.kubeconfig), used.context, state_root=state_root, progress=progress, lend_nodes=used.lend_nodes)

    def used(self, cluster: str) -> Used | None:
        return Used.read(self.state_dir(cluster))

    def state_dir(self, cluster: str) -> pathlib.Path:
        return self.state_root / cluster

    def _kwok(self, cluster: str) -> kwok_controller.KwokController:
        return kwok_controller.KwokController(self.state_dir(cluster) / "kwok", self.kubeconfig, self.context, embedded.stage_documents(), self.tools)

    def up(self, cluster: str, groups: Sequence[nodes.NodeGroup]) -> base.ClusterHandle:
        """The cluster checked, and the spec's nodes added as kwok nodes. `owned` means this call
        started the kit's kwok controller, so its caller's `down` removes what the kit added."""
        if not self.kubeconfig.is_file():
            raise base.ClusterError(f"existing backend: kubeconfig {self.kubeconfig} does not exist; pass --kubeconfig PATH (and --context NAME)")
        try:
            api = kube.client(self.kubeconfig, self.context)
        except (kubernetes.config.ConfigException, ValueError) as err:
            raise base.ClusterError(f"existing backend: cannot use {self.kubeconfig} (context {self.context or 'current'}): {err}") from err
        kube.wait_ready(api, READY_TIMEOUT_S)
        lent = self._nodes_to_lend(api)
        controller = self._kwok(cluster)
        reused = controller.running()
        if not reused:
            # Recorded before anything is started: whatever this call leaves, prune can find.
            self._record(cluster, api)
        controller.start(self.progress)
        try:
            names = kube.create_nodes(api, nodes.kwok_nodes(groups))
            kube.wait_nodes_ready(api, names, NODES_READY_TIMEOUT_S)
        except BaseException:
            # The caller gets no handle to call `down` with: take back what this call added
            # (the detached kwok controller would otherwise outlive the run), as kind's `up` does.
            if not reused:
                self.down(cluster)
            raise
        return base.ClusterHandle(
            name=cluster, backend=self.name, kubeconfig=self.kubeconfig, context=self.context, owned=not reused, reused=reused,
            state_dir=self.state_dir(cluster), host_address=self.host_address or self._local_address(api),
            node_selector=(nodes.KIT_NODE_SELECTOR, nodes.LENT_NODE_SELECTOR) if lent else (nodes.KIT_NODE_SELECTOR,), real_nodes=lent,
        )

    def _record(self, cluster: str, api: kubernetes.client.ApiClient) -> None:
        state = self.state_dir(cluster)
        state.mkdir(parents=True, exist_ok=True)
        if self.owner is not None:
            owners.record(state, self.owner)
        context = self.context or kubernetes.config.list_kube_config_contexts(str(self.kubeconfig))[1]["name"]
        Used(str(self.kubeconfig.resolve()), context, api.configuration.host, self.lend_nodes).write(state)

    def clusters(self) -> list[str]:
        """The clusters whose kwok controller and nodes the kit recorded here (`up`, until `down`)."""
        if not self.state_root.is_dir():
            return []
        return sorted(p.name for p in self.state_root.iterdir() if (p / RECORD_FILE).is_file())

    def owner_of(self, cluster: str) -> owners.Owner | None:
        return owners.read(self.state_dir(cluster))

    def processes(self, cluster: str) -> list[processes.Process]:
        """The kit's processes for this cluster on this machine (its kwok controller)."""
        return processes.under(self.state_dir(cluster))

    def _nodes_to_lend(self, api: kubernetes.client.ApiClient) -> tuple[str, ...]:
        """The first `lend_nodes` (by name) of the cluster's nodes that can run a scenario's
        containers; a ClusterError naming what was found where there are fewer."""
        if not self.lend_nodes:
            return ()
        found = lendable_nodes(kubernetes.client.CoreV1Api(api).list_node().items)
        if len(found) < self.lend_nodes:
            raise base.ClusterError(
                f"existing backend: --lend-nodes {self.lend_nodes}, but the cluster has {len(found)} node(s) that can run a scenario's containers "
                f"(Ready, schedulable, without NoSchedule or NoExecute taints, not a control plane, not the kit's){': ' + ', '.join(found) if found else ''}"
            )
        return tuple(found[: self.lend_nodes])

    def _local_address(self, api: kubernetes.client.ApiClient) -> str:
        """The address this machine reaches the API server from: how the server sees it."""
        url = urllib.parse.urlparse(api.configuration.host)
        port = url.port or (443 if url.scheme == "https" else 80)
        with socket.create_connection((url.hostname or "127.0.0.1", port), timeout=10) as conn:
            return str(conn.getsockname()[0])

    def preflight(self) -> list[str]:
        """What stops this backend from working, one line each, before any scenario runs: no
        kubeconfig, one that does not load, an unknown context, an API server that does not
        answer within PREFLIGHT_TIMEOUT_S, fewer nodes to lend than `--lend-nodes` asks for. Empty
        when it is usable."""
        where = "KUBECONFIG" if os.environ.get("KUBECONFIG") else "the default"
        if not self.kubeconfig.is_file():
            return [f"existing backend: kubeconfig {self.kubeconfig} ({where if not self._given else 'given'}) does not exist; pass --kubeconfig PATH (and --context NAME)"]
        try:
            doc = yaml.safe_load(self.kubeconfig.read_text())
        except (OSError, yaml.YAMLError) as err:
            return [f"existing backend: kubeconfig {self.kubeconfig} cannot be read as YAML: {err}".replace("\n", " ")]
        contexts = [c.get("name") for c in (doc or {}).get("contexts") or [] if isinstance(c, dict)] if isinstance(doc, dict) else []
        if self.context is not None and self.context not in contexts:
            return [f"existing backend: context {self.context!r} is not in {self.kubeconfig}; its contexts: {', '.join(map(str, contexts)) or 'none'}"]
        try:
            configuration = kubernetes.client.Configuration()
            kubernetes.config.load_kube_config(config_file=str(self.kubeconfig), context=self.context, client_configuration=configuration)
        except (kubernetes.config.ConfigException, ValueError, TypeError, KeyError, AttributeError) as err:
            return [f"existing backend: cannot use {self.kubeconfig} (context {self.context or 'current'}): {err}"]
        # No retries inside a request: the deadline alone decides how long an unreachable server gets.
        configuration.retries = 0
        api = kubernetes.client.ApiClient(configuration)
        try:
            kube.wait_ready(api, PREFLIGHT_TIMEOUT_S)
        except base.ClusterError as err:
            return [f"existing backend: the API server {api.configuration.host} (context {self.context or 'current'}) does not answer: {err}"]
        try:
            self._nodes_to_lend(api)
        except base.ClusterError as err:
            return [str(err)]
        return []

    def down(self, cluster: str) -> None:
        """Remove the kit's nodes and stop its kwok controller; the cluster itself stays."""
        self._kwok(cluster).stop()
        removed = kwok_controller.delete_kit_nodes(self.kubeconfig, self.context) if self.kubeconfig.is_file() else []
        # Only a run that lends nodes takes the label back: without --lend-nodes no node of the
        # user's is touched.
        returned = self._return_lent_nodes() if self.lend_nodes and self.kubeconfig.is_file() else []
        if self.state_dir(cluster).exists():
            shutil.rmtree(self.state_dir(cluster), ignore_errors=True)
        self.progress(f"existing backend: cluster {cluster} is not the kit's to stop; removed the kit's {len(removed)} nodes and its kwok controller"
                      + (f"; took the lent label off {', '.join(returned)}" if returned else ""))

    def _return_lent_nodes(self) -> list[str]:
        """Take the lent label off every node that carries it (a killed run's too)."""
        core = kubernetes.client.CoreV1Api(kube.client(self.kubeconfig, self.context))
        key, value = nodes.LENT_NODE_LABEL
        carrying = [kube.name_of(n) for n in core.list_node(label_selector=f"{key}={value}").items]
        for name in carrying:
            core.patch_node(name, {"metadata": {"labels": {key: None}}})
        return carrying

    def status(self, cluster: str) -> base.ClusterStatus:
        try:
            kube.wait_ready(kube.client(self.kubeconfig, self.context), timeout_s=5)
        except (base.ClusterError, kubernetes.config.ConfigException, OSError, ValueError) as err:
            return base.ClusterStatus(cluster, self.name, False, self.kubeconfig, str(err))
        return base.ClusterStatus(cluster, self.name, True, self.kubeconfig, f"context {self.context or 'current'}")


# The taints that keep a pod without tolerations off a node.
REPELLING_TAINT_EFFECTS = ("NoSchedule", "NoExecute")


def lendable_nodes(found: Sequence[kubernetes.client.V1Node]) -> list[str]:
    """The names, sorted, of the nodes a scenario's pods can run on as they are written (no
    tolerations, no node selector): Linux, Ready, schedulable, untainted, not a control plane,
    and not one of the kit's kwok nodes."""
    names = []
    for node in found:
        labels = kube.meta(node).labels or {}
        annotations = kube.meta(node).annotations or {}
        spec = node.spec or kubernetes.client.V1NodeSpec()
        conditions = {c.type: c.status for c in (node.status.conditions if node.status else None) or []}
        if (
            annotations.get(nodes.KWOK_NODE_ANNOTATION) == "fake"
            # The workload images are Linux ones.
            or labels.get("kubernetes.io/os", "linux") != "linux"
            or any(label in labels for label in nodes.CONTROL_PLANE_LABELS)
            or spec.unschedulable
            or any(t.effect in REPELLING_TAINT_EFFECTS for t in spec.taints or [])
            or conditions.get("Ready") != "True"
        ):
            continue
        names.append(kube.name_of(node))
    return sorted(names)


def _default_kubeconfig() -> pathlib.Path:
    env = os.environ.get("KUBECONFIG", "")
    first = env.split(os.pathsep)[0] if env else ""
    return pathlib.Path(first).expanduser() if first else pathlib.Path.home() / ".kube" / "config"
