"""Shared helpers for the kit's own tests. The cluster fixtures come from conformance.pytest_plugin."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
from typing import Iterator

import kubernetes
import pytest

from conformance.cluster import base, embedded, kube, nodes

# Deliberately broken scenario files for the loader's tests: never collected as scenarios.
collect_ignore = ["data"]


@pytest.fixture
def path_without_go(tmp_path: pathlib.Path) -> str:
    """A PATH that still has sh, python and the usual tools but no `go`."""
    go = shutil.which("go")
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    if go:
        go_dir = str(pathlib.Path(go).parent)
        # Where go shares a folder with other tools, shadow it with a private bin of links instead.
        shadow = tmp_path / "path-without-go"
        shadow.mkdir()
        kept = []
        for d in dirs:
            if d == go_dir:
                for entry in pathlib.Path(d).iterdir():
                    if entry.name != "go" and entry.name != "gofmt":
                        (shadow / entry.name).symlink_to(entry)
                kept.append(str(shadow))
            else:
                kept.append(d)
        dirs = kept
    return os.pathsep.join(dirs)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False, help="rewrite golden output files from what was observed")


@dataclasses.dataclass(frozen=True)
class OwnCluster:
    """A one-node embedded cluster that only its module's tests use: no implementation runs in it
    (the worker's session cluster may run the reference, started by tests that run scenarios)."""

    handle: base.ClusterHandle
    state_dir: pathlib.Path
    api: kubernetes.client.ApiClient


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnCluster]:
    backend = embedded.EmbeddedBackend(state_root=pathlib.Path(tmp_path_factory.mktemp("own")), progress=lambda _: None)
    handle = backend.up("vck-own", nodes.parse("1"))
    try:
        yield OwnCluster(handle, backend.state_dir("vck-own"), kube.client(handle.kubeconfig, handle.context))
    finally:
        backend.down("vck-own")
