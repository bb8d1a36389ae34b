"""`make demo`: bring up the embedded cluster and show it working, then stop it.

Three pods show the kit's pod stages: one bound by hand becomes Running and stays Running, one
annotated to succeed after 2 s reaches Succeeded, one annotated to fail with exit code 3 reaches
Failed with that code. Pass --keep to leave the cluster running afterwards.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

import kubernetes

from conformance.cluster import embedded, kube, nodes, resources

NODES = "3:cpu=8,memory=32Gi,label:pool=demo"
TIMEOUT_S = 60.0


def _pod(name: str, node: str, annotations: dict[str, str], restart_policy: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"nodeName": node, "restartPolicy": restart_policy, "containers": [{"name": "main", "image": "busybox"}]},
    }


def _exit_code(pod: dict[str, Any]) -> object:
    statuses = pod.get("status", {}).get("containerStatuses") or [{}]
    return statuses[0].get("state", {}).get("terminated", {}).get("exitCode")


def run(cluster: str, keep: bool) -> int:
    backend = embedded.EmbeddedBackend()
    started = time.monotonic()
    handle = backend.up(cluster, nodes.parse(NODES))
    try:
        api = kube.client(handle.kubeconfig)
        core = kubernetes.client.CoreV1Api(api)
        names = [kube.name_of(n) for n in core.list_node().items]
        print(f"cluster {cluster} up in {time.monotonic() - started:.1f}s with nodes: {', '.join(names)}")
        pods = [
            _pod("demo-runs", names[0], {}, "Always"),
            _pod("demo-succeeds", names[1], {"conformance.vck.io/end": "Succeeded", "conformance.vck.io/after": "2s"}, "Never"),
            _pod("demo-fails", names[2], {"conformance.vck.io/end": "Failed", "conformance.vck.io/exit-code": "3"}, "Never"),
        ]
        for pod in pods:
            core.create_namespaced_pod("default", resources.as_model(pod))
        for name, phase in (("demo-runs", "Running"), ("demo-succeeds", "Succeeded"), ("demo-fails", "Failed")):
            t0 = time.monotonic()
            pod = kube.wait_pod(api, "default", name, kube.phase_is(phase), TIMEOUT_S, f"to be {phase}")
            code = _exit_code(pod)
            print(f"pod {name}: {phase} after {time.monotonic() - t0:.1f}s" + (f" (exit code {code})" if code is not None else ""))
        print(f"the cluster works. export KUBECONFIG={handle.kubeconfig}")
    finally:
        if not keep:
            backend.down(cluster)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.demo", description=__doc__)
    parser.add_argument("--name", default="vck-demo")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running")
    args = parser.parse_args(argv)
    try:
        return run(args.name, args.keep)
    except KeyboardInterrupt:
        print("demo: interrupted; cleaned up", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
