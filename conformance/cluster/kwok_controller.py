"""kwok's controller, run by the kit against a cluster it did not start (kind, existing).

On the embedded backend kwokctl runs kwok for every node. On a kind or existing cluster the kit
runs the toolchain's kwok binary itself, on this machine, against that cluster's API server (as
knavigator drives its virtual nodes from outside): it manages only the nodes the kit creates
(annotation `kwok.x-k8s.io/node=fake`, which `nodes.kwok_node` puts on each), with the kit's pod
stages, so a scenario gets the node shapes it declares on every backend while the cluster's real
nodes and kubelets stay as they are.

The process is detached (it belongs to the cluster, like kwokctl's, not to the command that
started it) and found again by its folder on its command line; its log is `kwok.log` there.
"""

from __future__ import annotations

import pathlib
import subprocess
from typing import Any, Callable, Mapping

import kubernetes
import yaml

from conformance.cluster import kube, nodes, processes

Progress = Callable[[str], None]
# Node leases as kwokctl gives them, so the node lifecycle controller sees each node alive.
LEASE_S = 200
SELECTOR = f"{nodes.KWOK_NODE_ANNOTATION}=fake"


class KwokController:
    def __init__(self, folder: pathlib.Path, kubeconfig: pathlib.Path, context: str | None, stages: list[dict[str, Any]], tools: Callable[[], Mapping[str, pathlib.Path]]) -> None:
        self.folder = folder
        self.kubeconfig = kubeconfig
        self.context = context
        self.stages = stages
        self.tools = tools

    @property
    def log(self) -> pathlib.Path:
        return self.folder / "kwok.log"

    def running(self) -> bool:
        return any(p.name == "kwok" for p in processes.under(self.folder))

    def start(self, progress: Progress) -> None:
        """Start it unless it runs; the nodes it manages are created by the caller."""
        if self.running():
            return
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        config = self.folder / "kwok.yaml"
        kwok_configuration = {"apiVersion": "config.kwok.x-k8s.io/v1alpha1", "kind": "KwokConfiguration", "options": {}}
        config.write_text(yaml.safe_dump_all([kwok_configuration, *self.stages], sort_keys=False))
        argv = [
            str(self.tools()["kwok"]),
            f"--kubeconfig={self._kubeconfig()}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={SELECTOR}",
            f"--config={config}",
            f"--node-lease-duration-seconds={LEASE_S}",
        ]
        progress(f"kwok: managing the kit's nodes on {self.kubeconfig} (log: {self.log})")
        with open(self.log, "ab") as out:
            subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def _kubeconfig(self) -> pathlib.Path:
        return kube.kubeconfig_selecting(self.kubeconfig, self.context, self.folder)

    def stop(self) -> None:
        processes.stop(processes.under(self.folder))


def delete_kit_nodes(kubeconfig: pathlib.Path, context: str | None, timeout_s: float = 60.0) -> list[str]:
    """Remove every node the kit created (kwok's annotation) from the cluster; their names."""

    api = kube.client(kubeconfig, context)
    core = kubernetes.client.CoreV1Api(api)
    names = [kube.name_of(n) for n in core.list_node().items if (kube.meta(n).annotations or {}).get(nodes.KWOK_NODE_ANNOTATION) == "fake"]
    for name in names:
        try:
            core.delete_node(name)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
    if names:
        gone = set(names)
        kube.watch_until(core.list_node, lambda state: not gone & set(state), timeout_s, f"the kit's nodes {sorted(gone)} to be removed")
    return names
