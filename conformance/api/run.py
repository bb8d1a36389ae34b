"""`vck run`: the conformance run. It checks the configuration, makes the toolchain and the
implementation ready (their progress printed, their time the run's setup), runs the scenarios
through pytest (pytest-xdist for `--jobs`), so `vck run` and `pytest scenarios/` behave the same,
and writes the reports from the results pytest hands back (bridge.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import io
import os
import pathlib
import re
import shlex
import sys
import tempfile
import time
from typing import Callable

import pytest

from conformance import config as run_config
from conformance import data, interrupts, results, shards, stress
from conformance.api import bridge, clusters
from conformance.cluster import owners
from conformance.impl import registry as impl_registry
from conformance.report import attempts, score, writer
from conformance.scenario import models
from conformance.toolchain import install, versions


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def new_run_id() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    run_id: str
    report_dir: pathlib.Path | None
    run: results.RunResult | None
    certified: bool
    pytest_exit: int


@dataclasses.dataclass(frozen=True)
class WrittenRun:
    """A run's results and the folder its reports went to."""

    run: results.RunResult
    folder: pathlib.Path


# --- before anything starts ------------------------------------------------------------------------
def problems(config: run_config.RunConfig) -> list[str]:
    """Everything that keeps the run from starting, one line each: the configuration and its
    scenarios (RunConfig.validate), then a `-k` that selects nothing or does not parse, judged by
    pytest's own collection of the selection (nothing starts: no toolchain, no cluster)."""
    found = config.validate()
    if config.keyword is not None and not found:
        found += keyword_problems(config)
    return found


def preflight(config: run_config.RunConfig) -> list[str]:
    """What would make the run fail for reasons of its own, found before anything starts (run
    after `problems`): a reports folder it cannot write, a cluster it cannot reach."""
    found = []
    if config.reports is not None:
        try:
            config.reports.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=config.reports, prefix=".vck-write-check-"):
                pass
        except OSError as err:
            found.append(f"--reports {config.reports} is not writable ({err.strerror or err}); the run's results would be lost")
    return found + config.backend.preflight()


def keyword_problems(config: run_config.RunConfig) -> list[str]:
    """`-k` judged as pytest judges it, by pytest: a collection of the selection (the scenarios
    already loaded, nothing run), quiet; a refusal names the expression and why."""
    spec = bridge.RunSpec.of(config, None)
    collector = bridge.RunCollector(spec, config.preloaded())
    said = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(said):
        code = _collect(pytest_args(config, collect_only=True), collector)
    config.keyword_ids, config.keyword_judged = tuple(dict.fromkeys(collector.selected_ids)), config.keyword
    if code == pytest.ExitCode.USAGE_ERROR:
        found = re.search(r"Wrong expression passed to '-k': (.*)", said.getvalue())
        why = found.group(1).split(": ", 1)[-1].strip() if found else said.getvalue().strip().splitlines()[-1:]
        return [f"-k {config.keyword!r} is not a valid expression: {why}"]
    if not collector.selected_count:
        return [f"no scenario matches -k {config.keyword!r}"]
    return []


def _collect(args: list[str], collector: bridge.RunCollector) -> int:
    """A pytest pass that only collects. pytest catches a signal's KeyboardInterrupt and ends
    the pass as INTERRUPTED: raised again here, so the run ends as interrupted, not as empty."""
    code = int(pytest.main(args, plugins=[collector]))
    if code == pytest.ExitCode.INTERRUPTED or interrupts.RECORD.received is not None:
        raise KeyboardInterrupt(interrupts.RECORD.describe())
    return code


def pytest_args(config: run_config.RunConfig, collect_only: bool = False) -> list[str]:
    """pytest's own arguments for the run: the selected files, pytest's switches, `-k`, the
    workers. The kit's settings are not among them: they travel whole (bridge.RunSpec)."""
    args = [
        *config.selected_paths(),
        # Scenarios keep no files of pytest's: no cache folder in the project, and no
        # pytest-of-USER folder in the system's temporary one (xdist makes one for its workers
        # whenever pytest's tmp_path plugin is loaded).
        "-p", "no:cacheprovider",
        "-p", "no:tmpdir",
        # The kit's own pytest configuration and the scenarios' folder as rootdir: the ini files and
        # conftest.py of the folder `vck run` is started from are none of the run's business.
        "-c", str(data.kit("pytest.ini")),
        "--rootdir", _rootdir(config),
        "-o", "testpaths=",
    ]
    if config.keyword:
        args += ["-k", config.keyword]
    if collect_only or config.collect_only:
        return [*args, "--collect-only", "-q"]
    workers = config.workers()
    if workers > 1:
        # worksteal: each worker starts on a contiguous share of the sorted scenarios (so
        # scenarios sharing a scheduler conf and node shapes stay together and the
        # implementation restarts rarely), and an idle worker takes half of a busy one's rest.
        args += ["-n", str(workers), "--dist", "worksteal"]
    args += ["-q"] if not config.verbose else ["-v"]
    return args


def _rootdir(config: run_config.RunConfig) -> str:
    """The folder the scenario paths share (pytest names items relative to it)."""
    folders = [str(path.resolve() if path.is_dir() else path.resolve().parent) for path in map(pathlib.Path, config.scenarios)]
    return os.path.commonpath(folders) if folders else os.getcwd()


# --- the run -----------------------------------------------------------------------------------------
def run(config: run_config.RunConfig, progress: Callable[[str], None] = _stderr) -> RunOutcome:
    """Run the selected scenarios and write the reports; `certified` decides the exit status.

    The run owns every cluster its workers start: when it ends, however it ends, whatever they left
    behind (a worker stopped in the middle of a scenario cannot clean up) is removed."""
    run_id = config.run_id or new_run_id()
    spec = bridge.RunSpec.of(config, run_id, progress=True)
    collector = bridge.RunCollector(spec, config.preloaded())
    if config.collect_only:
        return RunOutcome(run_id, None, None, False, _collect(pytest_args(config), collector))
    if config.timeout_s is not None:
        interrupts.RECORD.arm_deadline(config.timeout_s)
    setup_s: dict[str, float] = {}
    try:
        # The busy processes of --stress run for the whole run, its setup included.
        with stress.busy(config.stress), owners.claimed_for_this_run() as owner:
            try:
                # The implementation's own build (Volcano's binaries: minutes, the first time),
                # once for every worker, its progress seen, its time the run's setup.
                implementation = impl_registry.implementation(config.implementation)
                prepare = getattr(implementation, "prepare", None)
                if prepare is not None:
                    setup_s.update(_timed("implementation build", lambda: prepare(progress)))
                kube = kubernetes_release(config, implementation, progress)
                # Every backend runs the toolchain's binaries (the embedded cluster; kwok on kind
                # and existing clusters): made ready here, where its progress is seen, rather
                # than in a worker behind pytest's capture; inside the deadline like the rest.
                setup_s.update(_timed("toolchain", lambda: install.install(progress=progress, kube=kube)))
                if config.keyword:
                    keyword_ids(config)  # the workers are as many as -k leaves scenarios for
                on_real_nodes = raise_kind_workers(config)
                if on_real_nodes:
                    setup_s.update(_timed("workload images", lambda: prepare_workload_images(config, on_real_nodes, progress)))
                code = pytest.main(pytest_args(config), plugins=[collector])
                # The run is over: a deadline passing during the clean-up below changes nothing.
                interrupts.RECORD.disarm()
            except KeyboardInterrupt:
                # Before pytest started (the toolchain install): nothing ran.
                code = pytest.ExitCode.INTERRUPTED
            finally:
                # A second Ctrl-C waits until what the workers left is gone.
                with interrupts.deferred():
                    clusters.prune_clusters(clusters.PruneConfig(owner=owner))
    finally:
        interrupts.RECORD.disarm()
    collected = collector.collected
    if collected is None or config.reports is None or not (collected.results or collected.interrupted):
        return RunOutcome(run_id, None, None, False, int(code))
    collected.setup_s = {**setup_s, **collected.setup_s}
    written = write(config, run_id, collected)
    return RunOutcome(run_id, written.folder, written.run, score.certified(written.run), int(code))


def kubernetes_release(config: run_config.RunConfig, implementation: object, progress: Callable[[str], None]) -> str:
    """The Kubernetes release the run's clusters run: the one asked for, else for an embedded
    cluster the minor the implementation was built against (a Volcano release's go.mod; the
    nearest pinned one), else the default. Written into the configuration, so every worker
    starts the same."""
    if config.backend.kube_version is None and config.backend.name == "embedded":
        built_for = getattr(implementation, "kubernetes_version", lambda: None)()
        if built_for:
            config.backend.kube_version = versions.nearest_kube(built_for)
            progress(f"kubernetes: {config.backend.kube_version} (the implementation was built against {built_for})")
    return config.backend.kubernetes()


def _on_real_nodes(config: run_config.RunConfig) -> list[models.Scenario]:
    """The selected scenarios that ask for real nodes (`real_nodes`), after `-k` (judged by a
    pytest collection, as the run will: only when some scenario asks, and the backend is kind or
    an existing cluster that lends nodes)."""
    if config.backend.name != "kind" and not config.backend.real_node_capacity():
        return []
    wanted = [sc for sc in config.selected() if sc.real_nodes]
    if not wanted or not config.keyword:
        return wanted
    chosen = set(keyword_ids(config))
    return [sc for sc in wanted if sc.id in chosen]


def keyword_ids(config: run_config.RunConfig) -> tuple[str, ...]:
    """The ids `-k` selects, judged by a pytest collection once per configuration (`problems`
    judges it first; a run started without it judges it here)."""
    if config.keyword_ids is None or config.keyword_judged != config.keyword:
        keyword_problems(config)
    assert config.keyword_ids is not None
    return config.keyword_ids


def raise_kind_workers(config: run_config.RunConfig) -> list[models.Scenario]:
    """Give a kind run the real workers its selected scenarios ask for (`real_nodes`), so that
    `vck run --backend kind --suite workloads` needs no --kind-workers; those scenarios (also an
    existing cluster's that lends nodes; none where the backend lends no real node: there they
    are not applicable)."""
    wanted = _on_real_nodes(config)
    if wanted and config.backend.name == "kind":
        config.backend.kind_workers = max(config.backend.kind_workers, *(sc.real_nodes for sc in wanted))
    return wanted


def prepare_workload_images(config: run_config.RunConfig, scenarios: list[models.Scenario], progress: Callable[[str], None]) -> None:
    """The images the selected scenarios name (`vck.workload/<name>`): the user's, else built
    here once (minutes the first time, then found by their recipe's tag; on kind only, which loads
    them into its workers: an existing cluster's nodes pull the user's). Written into the
    configuration, so every worker's cluster loads and uses the same."""
    from conformance.cluster import docker, workload_images

    wanted: set[str] = set()
    for sc in scenarios:
        wanted |= workload_images.placeholders(sc.written())
    chosen = workload_images.parse_user_images(config.workload_images)
    missing = sorted(wanted - set(chosen)) if config.backend.name == "kind" else []
    engine = docker.ensure(progress) if missing else None
    for name in missing:
        assert engine is not None
        chosen[name] = workload_images.build(engine, name, progress)
    config.backend.images = {name: chosen[name] for name in sorted(wanted) if name in chosen}
    # Real pods that ask for GPUs get them from the fake device plugin on the workers.
    config.backend.device_plugin = config.backend.name == "kind" and any(workload_images.requests_resource(sc.written(), "nvidia.com/gpu") for sc in scenarios)


def _timed(name: str, work: Callable[[], object]) -> dict[str, float]:
    began = time.monotonic()
    work()
    return {name: round(time.monotonic() - began, 1)}


def write(config: run_config.RunConfig, run_id: str, collected: bridge.Collected, said_versions: dict[str, str] | None = None) -> WrittenRun:
    """The run's result tree (a repeated scenario's attempts combined into one verdict) and its
    three reports under `config.reports`; signals wait while they are written, so they agree.
    `said_versions`: the implementation's, where the process that ran it said them (a dev session)."""
    from conformance.cluster import workload_images

    assert config.reports is not None
    try:
        impl_versions = said_versions if said_versions is not None else impl_registry.implementation(config.implementation).versions()
    except Exception as err:
        impl_versions = {"implementation": f"unknown ({err})"}
    meta = results.RunMetadata(
        run_id=run_id,
        implementation=config.implementation,
        backend=config.backend.name,
        versions={
            "kit": run_config.KIT_VERSION,
            "kubernetes": config.backend.kubernetes(),
            "etcd": config.backend.etcd(),
            "kwok": versions.KWOK_VERSION,
            **impl_versions,
            **workload_images.as_versions(config.backend.images),
        },
        started_at=datetime.datetime.fromtimestamp(collected.started, datetime.timezone.utc).isoformat(timespec="seconds"),
        wall_time_s=round(time.time() - collected.started, 1),
        time_scale=config.time_scale,
        command=" ".join(shlex.quote(a) for a in sys.argv),
        workers=collected.workers,
        selected=collected.selected,
        interrupted=collected.interrupted,
        repeat=config.repeat,
        stress=config.stress,
        setup_s=dict(collected.setup_s),
        shard=str(shards.parse(config.shard)) if config.shard else "",
        shard_plan=config.shard_plan(),
    )
    combined = attempts.combine(collected.results)
    run_result = results.RunResult(meta, tuple(sorted(combined, key=lambda r: (r.suite, r.id))))
    with interrupts.deferred():
        return WrittenRun(run_result, writer.write_all(run_result, config.reports))
