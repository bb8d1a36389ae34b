"""The kit's pytest plugin as pytest loads it in every environment the kit is installed in (the
`pytest11` entry point): cheap to import, and inert unless a run asks for scenarios.

- Options: the run's settings, one `--vck-*` option per field of the run's configuration
  (conformance.config), and `--vck` (collect the YAML files under folders named `scenarios`).
- Opt-in, as pytest's own doctest plugin collects text files only when asked: the scenario plugin
  (pytest_plugin.py) is registered only for `vck run` (in-process and in its xdist workers), for
  `--vck`, for `--vck-scenarios DIR` or when the `vck_scenarios` ini setting names folders. Any
  other pytest run collects nothing of the kit's, and imports nothing heavier than this module.
- Public fixtures, for tests that want a real cluster: `vck_cluster` (one cluster per session, one
  per xdist worker, stopped at the end), `vck_api` (an official-client ApiClient to it) and
  `vck_namespace` (a fresh namespace per test). Whatever they need is imported when first asked.
"""

from __future__ import annotations

import importlib
import re
import secrets
import sys
from typing import TYPE_CHECKING, Iterator

import pytest

from conformance import config as run_config

if TYPE_CHECKING:
    import kubernetes

    from conformance.cluster import base

PLUGIN_NAME = "vck-scenarios"
NAMESPACE_READY_TIMEOUT_S = 60.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("vck", "Volcano conformance kit")
    group.addoption("--vck", action="store_true", default=False, help="run the YAML files under folders named `scenarios` as the kit's scenarios")
    for _, field, opt in run_config.option_fields():
        if opt.kind == "paths":
            group.addoption(opt.flag, dest=f"vck_{field.name}", action="append", default=[], help=f"{opt.help} (asks for scenarios, as --vck does)")
        else:
            group.addoption(opt.flag, dest=f"vck_{field.name}", default=None, help=f"{opt.help} (default: {field.default})")
    group.addoption("--vck-progress", action="store_true", default=False, help="print a line per scenario with a running tally")
    group.addoption("--vck-nodes", default=None, help="node spec of the session cluster of the vck_cluster fixture")
    group.addoption("--vck-cluster-name", default=None, help="that cluster's name (default: one per process)")
    parser.addini("vck_scenarios", type="paths", default=[], help="folders of the kit's scenarios to collect (asks for scenarios, as --vck does)")


def asks_for_scenarios(config: pytest.Config) -> bool:
    """Whether this pytest run is a run of scenarios (see the module's docstring)."""
    if config.getoption("vck") or config.getoption("vck_scenarios") or config.getini("vck_scenarios"):
        return True
    if run_config.WORKER_INPUT in (getattr(config, "workerinput", None) or {}):
        return True
    # `vck run` in-process: its bridge is imported, and its collector put the run in the stash.
    bridge = sys.modules.get("conformance.api.bridge")
    return bridge is not None and bridge.RUN_KEY in config.stash


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """After `vck run`'s collector (tryfirst) has put the run in the stash."""
    if asks_for_scenarios(config) and not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(importlib.import_module("conformance.pytest_plugin"), PLUGIN_NAME)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker stops its session's cluster (the `vck_cluster` fixture's) here, before it
    tells the controller it finished: the controller then gives it 10 s to exit before killing it,
    too short for a cluster's stop, which left the cluster's state folder behind (seen after `make
    test`: a `vck-gwN-PID` folder with no process). A process that is not a worker closes it at
    its end, as before."""
    if getattr(session.config, "workerinput", None) is not None:
        from conformance import pytest_session

        pytest_session.close_session(session.config)


@pytest.fixture(scope="session")
def vck_cluster(request: pytest.FixtureRequest) -> base.ClusterHandle:
    """A running cluster for the whole session; an embedded one per xdist worker, stopped at the end."""
    from conformance import pytest_session

    return pytest_session.session_of(request.config).cluster()


@pytest.fixture(scope="session")
def vck_api(vck_cluster: base.ClusterHandle) -> kubernetes.client.ApiClient:
    from conformance.cluster import kube

    return kube.client(vck_cluster.kubeconfig, vck_cluster.context)


@pytest.fixture
def vck_namespace(request: pytest.FixtureRequest, vck_api: kubernetes.client.ApiClient) -> Iterator[str]:
    """A namespace of its own for one test, ready for pods (its default ServiceAccount exists)."""
    import kubernetes

    from conformance.cluster import kube, resources

    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].rstrip("-")
    name = f"{stem}-{secrets.token_hex(3)}"
    core = kubernetes.client.CoreV1Api(vck_api)
    core.create_namespace(resources.as_model({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"conformance.vck.io/test": "true"}}}))
    try:
        kube.wait_service_account(vck_api, name, NAMESPACE_READY_TIMEOUT_S)
        yield name
    finally:
        try:
            core.delete_namespace(name)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
