"""Shared helpers for the kit's own tests. The cluster fixtures come from conformance.pytest_plugin."""

from __future__ import annotations

import os
import pathlib
import shutil
from typing import Iterator

import pytest

from conformance import pytest_session
from conformance.cluster import embedded, kube, nodes
from conformance.impl import reference
from conformance.runner import context
from tests import full_run, suite_runs
from tests.clusters import OwnCluster

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


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnCluster]:
    backend = embedded.EmbeddedBackend(state_root=pathlib.Path(tmp_path_factory.mktemp("own")), progress=lambda _: None)
    handle = backend.up("vck-own", nodes.parse("1"))
    try:
        yield OwnCluster(handle, backend.state_dir("vck-own"), kube.client(handle.kubeconfig, handle.context))
    finally:
        backend.down("vck-own")


# Fixtures that start or use a cluster: a test asking for one is a `cluster` test, so
# `make check` (`-m "not cluster"`) leaves it out without every module having to say so.
CLUSTER_FIXTURES = frozenset({"vck_cluster", "vck_api", "vck_namespace", "vck_context", "own_cluster", "reference_run", "broken_context"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)
    items.sort(key=_order)


@pytest.fixture(scope="session")
def vck_context(request: pytest.FixtureRequest) -> context.RunContext:
    """The process's run context (the vck_cluster fixture's cluster, and the implementation), for
    the kit's tests that run a scenario in-process (`runner.scenario_run.run`) and then look at the
    cluster it left."""
    return pytest_session.session_of(request.config).context()


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> full_run.FullRun:
    """The full reference run `make demo` does (`vck run`, every suite, default workers), done
    once per test session and shared by every xdist worker: the first to ask runs it, the others
    wait for it and read what it wrote."""
    return full_run.shared(tmp_path_factory)


@pytest.fixture(scope="session")
def broken_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[context.RunContext]:
    """A private embedded cluster per xdist worker with the reference on it, for running broken
    builds in-process: a test sets `implementation.broken` and runs its scenarios; only the
    processes the change concerns restart (a scheduler plugin only reloads the scheduler conf)."""
    root = tmp_path_factory.mktemp("broken")
    backend = embedded.EmbeddedBackend(state_root=root / "state", progress=lambda _: None)
    name = f"vck-broken-{os.getpid()}"
    handle = backend.up(name, nodes.parse(None))
    implementation = reference.Reference(workdir=root / "reference")
    try:
        yield context.RunContext(handle, implementation, time_scale=float(suite_runs.BROKEN_TIME_SCALE))
    finally:
        try:
            implementation.stop()
        finally:
            backend.down(name)


# `make test` hands tests out a few at a time (`--dist load --maxschedchunk 1`: xdist keeps two
# queued per worker), in this order: the
# full reference run first (it takes the machine's cores with its own workers), the broken builds
# beside it (one cluster per worker, mostly waiting out windows), then the chaos runs and the other
# long tests, then the rest in file order, so the run ends on short tests. The controller chaos
# test reads the full run's report only after its own run, by when that is long done.
LONGEST_FIRST = (
    "test_reference_run.py",
    "test_kind.py",
    "test_broken_builds.py",
    "test_scheduler_suites.py",
    "test_controller_suites.py",
    "test_interrupts.py",
    "test_bench.py",
    "test_gang_suite.py",
    "test_admission_kubectl.py",
    "test_embedded.py",
    "test_stages.py",
)


def _order(item: pytest.Item) -> int:
    name = item.path.name
    return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)
