"""One pytest process's share of the kit: the run it belongs to (`run_spec`) and its session (the
cluster and implementation it starts on first use, `session_of`). The scenario plugin and the
public fixtures (pytest_entry.py) both use it, so a process never runs two clusters."""

from __future__ import annotations

import pathlib
import sys
from typing import Callable

import pytest

from conformance import config as run_config
from conformance import session
from conformance.api import bridge

SESSION_KEY = pytest.StashKey[session.Session]()
SPEC_KEY = pytest.StashKey[bridge.RunSpec]()


def run_spec(config: pytest.Config) -> bridge.RunSpec:
    """The run this session is part of: as `vck run` handed it (in-process, or to an xdist worker
    through workerinput), or from the `--vck-*` options of a plain pytest run. Made once; a
    UsageError names every bad setting."""
    if SPEC_KEY in config.stash:
        return config.stash[SPEC_KEY]
    workerinput = getattr(config, "workerinput", None) or {}
    if bridge.RUN_KEY in config.stash:
        spec = config.stash[bridge.RUN_KEY]
    elif bridge.WORKER_INPUT in workerinput:
        spec = bridge.RunSpec.from_json(workerinput[bridge.WORKER_INPUT])
    else:
        try:
            settings = run_config.from_options({field.name: config.getoption(f"vck_{field.name}") for _, field, _ in run_config.option_fields()})
        except ValueError as err:
            raise pytest.UsageError(f"a --vck-* option: {err}") from None
        folders = config.getoption("vck_scenarios") or [str(p) for p in config.getini("vck_scenarios")]
        if folders and not config.getoption("vck_scenarios"):
            settings.scenarios = tuple(pathlib.Path(f) for f in folders)
        spec = bridge.RunSpec.of(settings, config.getoption("vck_run_id"), progress=config.getoption("--vck-progress"), any_folder=bool(folders))
    problems = spec.config.validate_settings()
    if problems:
        raise pytest.UsageError("; ".join(problems))
    config.stash[SPEC_KEY] = spec
    return spec


def worker_id(config: pytest.Config) -> str:
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else "main"


def uncaptured(config: pytest.Config) -> Callable[[str], None]:
    """Print a progress line past pytest's output capture: the cluster starts inside the first
    scenario, and whoever waits should see what for."""
    capture = config.pluginmanager.getplugin("capturemanager")

    def emit(line: str) -> None:
        if capture is None:
            print(line, file=sys.stderr, flush=True)
            return
        with capture.global_and_fixture_disabled():
            print(line, file=sys.stderr, flush=True)

    return emit


def _logs_dir(config: pytest.Config) -> pathlib.Path | None:
    """`<reports>/<run id>/logs` when the run writes reports under a known run id."""
    spec = run_spec(config)
    return spec.config.reports / spec.run_id / "logs" if spec.config.reports and spec.run_id else None


def _session_options(config: pytest.Config) -> session.SessionOptions:
    return session.SessionOptions(
        run=run_spec(config).config,
        worker=worker_id(config),
        logs_dir=_logs_dir(config),
        progress=uncaptured(config),
        cluster_name=config.getoption("--vck-cluster-name"),
        nodes=config.getoption("--vck-nodes"),
    )


def session_of(config: pytest.Config) -> session.Session:
    """The process's session, made on first use (nothing starts until a scenario or a fixture asks)."""
    if SESSION_KEY not in config.stash:
        config.stash[SESSION_KEY] = session.Session(_session_options(config))
        # However the process ends (the plugin's unconfigure closes it first when it is there).
        config.add_cleanup(lambda: close_session(config))
    return config.stash[SESSION_KEY]


def close_session(config: pytest.Config) -> None:
    if SESSION_KEY in config.stash:
        config.stash[SESSION_KEY].close()
        del config.stash[SESSION_KEY]
