"""`vck`: the command line, a thin layer over the toolchain and cluster modules."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Sequence

from conformance.cluster import base, nodes, registry
from conformance.toolchain import errors, install, versions


def _interrupt_on_sigterm() -> None:
    """SIGTERM cleans up like Ctrl-C: both unwind through the same `finally` blocks."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def _toolchain_install(args: argparse.Namespace) -> int:
    resolved = install.install(args.components, source=args.source)
    for name, item in resolved.items():
        print(f"{name:<24} {item.component.version:<10} {item.via:<8} {item.path}")
    return 0


def _toolchain_list(args: argparse.Namespace) -> int:
    for comp in versions.COMPONENTS:
        hit = install.cached(comp)
        print(f"{comp.name:<24} {comp.version:<10} {'cached' if hit else 'missing':<8} {hit or ''}")
    return 0


def _backend(args: argparse.Namespace) -> base.ClusterBackend:
    return registry.backend(args.backend, kubeconfig=getattr(args, "kubeconfig", None), context=getattr(args, "context", None))


def _cluster_up(args: argparse.Namespace) -> int:
    groups = nodes.parse(args.nodes)
    handle = _backend(args).up(args.name, groups)
    print(f"cluster {handle.name} ({handle.backend}) is up{' (reused)' if handle.reused else ''}")
    print(f"kubeconfig: {handle.kubeconfig}")
    print(f"export KUBECONFIG={handle.kubeconfig}")
    kubectl = install.cached(versions.component("kubectl"))
    if kubectl is not None:
        print(f"export PATH={kubectl.parent}:$PATH  # kubectl {versions.KUBERNETES_VERSION}")
    return 0


def _cluster_down(args: argparse.Namespace) -> int:
    _backend(args).down(args.name)
    return 0


def _cluster_status(args: argparse.Namespace) -> int:
    status = _backend(args).status(args.name)
    state = "running" if status.running else "not running"
    print(f"cluster {status.name} ({status.backend}): {state}")
    if status.kubeconfig:
        print(f"kubeconfig: {status.kubeconfig}")
    if status.detail:
        print(status.detail)
    return 0 if status.running else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vck", description="The Volcano conformance kit.")
    sub = parser.add_subparsers(dest="command", required=True)

    toolchain = sub.add_parser("toolchain", help="the pinned Kubernetes binaries the embedded cluster runs on")
    tsub = toolchain.add_subparsers(dest="toolchain_command", required=True)
    tinstall = tsub.add_parser("install", help="put every pinned component into the cache (cache, then release download, then go build)")
    tinstall.add_argument("components", nargs="*", help="only these components (default: all)")
    tinstall.add_argument("--source", choices=install.SOURCES, default="auto", help="auto: release download, falling back to go build (default)")
    tinstall.set_defaults(func=_toolchain_install)
    tlist = tsub.add_parser("list", help="the pinned components and whether each is cached")
    tlist.set_defaults(func=_toolchain_list)

    cluster = sub.add_parser("cluster", help="start, inspect and stop a cluster")
    csub = cluster.add_subparsers(dest="cluster_command", required=True)
    for verb, func, text in (
        ("up", _cluster_up, "start a cluster (or reuse a healthy one of the same name)"),
        ("down", _cluster_down, "stop every process the cluster started and remove its state"),
        ("status", _cluster_status, "say whether the cluster is running"),
    ):
        cmd = csub.add_parser(verb, help=text)
        cmd.add_argument("--backend", choices=registry.BACKENDS, default="embedded")
        cmd.add_argument("--name", default="vck", help="cluster name (default: vck)")
        cmd.add_argument("--kubeconfig", help="existing backend: the kubeconfig to use")
        cmd.add_argument("--context", help="existing backend: the context to use")
        if verb == "up":
            cmd.add_argument("--nodes", default=None, help=f"node groups, e.g. '4:cpu=8,memory=32Gi;2:nvidia.com/gpu=8,label:gpu=yes' (default: {nodes.DEFAULT_SPEC} nodes of {nodes.DEFAULT_CPU} cpu, {nodes.DEFAULT_MEMORY})")
        cmd.set_defaults(func=func)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _interrupt_on_sigterm()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("vck: interrupted; cleaned up", file=sys.stderr)
        return 130
    except (errors.ToolchainError, base.ClusterError, nodes.NodeSpecError) as err:
        print(f"vck: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
