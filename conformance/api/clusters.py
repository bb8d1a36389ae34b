"""Clusters: `vck cluster up|down|status|list|prune`, and the clusters a run owns."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Callable

from conformance import config as run_config
from conformance.cluster import base, embedded, existing, kind, nodes, owners


@dataclasses.dataclass
class ClusterConfig:
    backend: run_config.BackendConfig = dataclasses.field(default_factory=run_config.BackendConfig)
    name: str = "vck"
    # Node groups for `up` (nodes.parse's syntax); None: the default nodes.
    nodes: str | None = None


def cluster_up(config: ClusterConfig, progress: Callable[[str], None] | None = None) -> base.ClusterHandle:
    """Start the cluster (or reuse a healthy one of the same name); kept until `cluster_down`."""
    groups = nodes.parse(config.nodes)
    return config.backend.backend(progress).up(config.name, groups)


def cluster_down(config: ClusterConfig, progress: Callable[[str], None] | None = None) -> None:
    config.backend.backend(progress).down(config.name)


def cluster_status(config: ClusterConfig) -> base.ClusterStatus:
    return config.backend.backend().status(config.name)


@dataclasses.dataclass(frozen=True)
class ClusterInfo:
    name: str
    state: pathlib.Path
    # None: started by hand (`vck cluster up`) or before owners were recorded; kept until `down`.
    owner: owners.Owner | None
    owner_alive: bool
    # The kit's processes for it on this machine (an embedded cluster's; kind's kwok controller).
    processes: int
    rss_mib: int
    backend: str = "embedded"


def _existing_backend(state_root: pathlib.Path | None, progress: Callable[[str], None]) -> existing.ExistingBackend:
    return existing.ExistingBackend(state_root=_existing_root(state_root), progress=progress)


def _kind_backend(state_root: pathlib.Path | None, progress: Callable[[str], None]) -> kind.KindBackend:
    return kind.KindBackend(state_root=state_root / "kind" if state_root else None, progress=progress)


def list_clusters(state_root: pathlib.Path | None = None) -> list[ClusterInfo]:
    """Every cluster the kit keeps state for under `state_root` (default: $VCK_STATE_DIR or the
    cache): embedded ones, kind ones it created, and existing ones it put its kwok controller and
    nodes on; with its owner and whether the owner still runs. Reading kind's needs no Docker (its
    containers' memory is not counted)."""
    out = []
    listed: tuple[embedded.EmbeddedBackend | kind.KindBackend | existing.ExistingBackend, ...] = (
        embedded.EmbeddedBackend(state_root=state_root, progress=lambda _: None),
        _kind_backend(state_root, lambda _: None),
        _existing_backend(state_root, lambda _: None),
    )
    for backend in listed:
        names = backend.kit_clusters() if isinstance(backend, kind.KindBackend) else backend.clusters()
        for name in names:
            owner = backend.owner_of(name)
            procs = backend.processes(name)
            alive = owner is not None and owner.alive()
            out.append(ClusterInfo(name, backend.state_dir(name), owner, alive, len(procs), sum(p.rss_bytes() for p in procs) // 2**20, backend.name))
    return out


@dataclasses.dataclass(frozen=True)
class PruneConfig:
    state_root: pathlib.Path | None = None
    # Only the clusters this owner owns (a run cleaning up after itself); None: every cluster
    # whose owner is gone.
    owner: owners.Owner | None = None


def prune_clusters(config: PruneConfig, progress: Callable[[str], None] = lambda _: None) -> list[str]:
    """Remove clusters left behind (a kind one with `kind delete cluster`; on an existing cluster
    the kit's kwok controller, nodes and lent label); their names. One that cannot be removed is
    said (progress) and kept, and the others are still removed: a run prunes in its clean-up,
    which must not stop it writing its report."""
    backends: dict[str, base.ClusterBackend] = {
        "embedded": embedded.EmbeddedBackend(state_root=config.state_root, progress=progress),
        "kind": _kind_backend(config.state_root, progress),
    }
    found = list_clusters(config.state_root)
    removed = []
    for info in found:
        if config.owner is not None:
            doomed = info.owner is not None and info.owner.same_process(config.owner)
        else:
            doomed = info.owner is not None and not info.owner_alive
        if not doomed:
            continue
        try:
            if info.backend == "existing":
                _take_back_from_existing(config, info, found, progress)
            else:
                backends[info.backend].down(info.name)
        except Exception as err:  # one cluster's failure must not keep the others (or a run's report)
            progress(f"could not remove {info.backend} cluster {info.name} ({info.state}): {err.__class__.__name__}: {err}")
            continue
        removed.append(info.name)
    return removed


def _take_back_from_existing(config: PruneConfig, info: ClusterInfo, found: list[ClusterInfo], progress: Callable[[str], None]) -> None:
    """Take back what a run left on an existing cluster, from the cluster its record names (as the
    run had it): ClusterError, keeping the record, when that cluster is not reachable as it was,
    or when a run that is alive uses it now (`down` removes every node of the kit's there)."""
    backend = existing.ExistingBackend.recorded(_existing_root(config.state_root), info.name, progress)
    mine = backend.used(info.name)
    assert mine is not None  # `recorded` read it
    for other in found:
        if other.backend != "existing" or other.name == info.name or other.owner is None or not other.owner_alive:
            continue
        theirs = backend.used(other.name)
        if theirs is not None and (theirs.server, theirs.context) == (mine.server, mine.context):
            raise base.ClusterError(f"a live run (pid {other.owner.pid}, {other.name}) uses {mine.server} now; prune again after it ends")
    backend.down(info.name)


def _existing_root(state_root: pathlib.Path | None) -> pathlib.Path | None:
    return state_root / "existing" if state_root else None
