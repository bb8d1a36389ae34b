"""The kit as a library: one function per operation, each taking a config dataclass (with
`validate()` where a config can be wrong), in sonobuoy's shape.

    run(RunConfig)                  the conformance run: scenarios, verdicts, reports
    list_scenarios(ListConfig)      validate_scenarios(ValidateConfig)   new_scenario(NewConfig)
    cluster_up/down/status(ClusterConfig)   list_clusters()   prune_clusters(PruneConfig)
    install_toolchain(ToolchainConfig)      toolchain_status()
    kind_image(KindImageConfig)     bench_scheduler(bench.BenchConfig)   diff_runs(DiffConfig)

`vck` (cli.py) only parses flags, calls one of these and prints what it returns; the pytest
plugin calls `write_reports`. A run is executed by pytest (with pytest-xdist for `--jobs`), so
`vck run` and `pytest scenarios/` behave the same; `run` hands pytest the scenarios it loaded and
takes the results back in-process (RunCollector), as pytest's own junitxml keeps its state.
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib
import shlex
import sys
import tempfile
import time
from typing import Callable, Sequence

import pytest
from _pytest.mark import (
    expression as pytest_expression,  # -k's own parser (pinned pytest)
)

from conformance import interrupts, parallel, results, scaffold, stress
from conformance.bench import figures as bench_figures
from conformance.bench import scheduler as bench
from conformance.cluster import base, docker, embedded, kind, nodes, owners, registry
from conformance.cluster import kind_image as node_image
from conformance.impl import registry as impl_registry
from conformance.report import attempts, diff, score, writer
from conformance.scenario import loader, models, validate
from conformance.toolchain import install, versions

KIT_VERSION = "0.1.0"
REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_SCENARIOS = REPO_ROOT / "scenarios"
DEFAULT_REPORTS = REPO_ROOT / "reports"
# The reference's committed report: the durations a first run orders its long scenarios by.
REFERENCE_REPORT = DEFAULT_REPORTS / "reference" / "report.json"


@dataclasses.dataclass
class RunConfig:
    scenarios: Sequence[pathlib.Path] = (DEFAULT_SCENARIOS,)
    suites: Sequence[str] = ()
    keyword: str | None = None
    implementation: str = "reference"
    backend: str = "embedded"
    kubeconfig: str | None = None
    kube_context: str | None = None
    # A number of workers, or parallel.AUTO: chosen from the machine's cores and memory.
    jobs: int | str = parallel.AUTO
    time_scale: float = 1.0
    reports: pathlib.Path = DEFAULT_REPORTS
    run_id: str | None = None
    verbose: bool = False
    # The whole run's deadline in seconds: a run that reaches it ends as an interrupted one.
    timeout_s: float | None = None
    # Only say which scenarios the run would run.
    collect_only: bool = False
    # kind: real workers beside the control plane; existing: this machine's address as the
    # cluster's API server reaches it (for the implementation's webhook).
    kind_workers: int = 0
    host_address: str | None = None
    # Run every selected scenario this many times, interleaved with the others and spread over
    # the workers; a scenario whose attempts end differently is FLAKY (never certified).
    repeat: int = 1
    # Busy CPU processes kept running beside the run, for the whole of it (a busy machine on
    # demand, to hunt flakes: docs/flakes.md).
    stress: int = 0
    # The scenario tree as loaded (once): the paths it was loaded from, the scenarios, the problems.
    _loaded: tuple[tuple[str, ...], list[models.Scenario], list[loader.Problem]] | None = dataclasses.field(default=None, init=False, repr=False, compare=False)

    def validate(self) -> list[str]:
        problems = []
        for path in self.scenarios:
            if not pathlib.Path(path).exists():
                problems.append(f"scenario path {path} does not exist")
        if self.backend not in registry.BACKENDS:
            problems.append(f"backend {self.backend!r}: use one of {', '.join(registry.BACKENDS)}")
        try:
            parallel.parse_jobs(str(self.jobs))
        except ValueError as err:
            problems.append(str(err))
        if self.time_scale <= 0:
            problems.append(f"--time-scale {self.time_scale}: must be greater than 0")
        if self.repeat < 1:
            problems.append(f"--repeat {self.repeat}: must be at least 1")
        if self.stress < 0:
            problems.append(f"--stress {self.stress}: must be 0 or more")
        if self.kind_workers < 0:
            problems.append(f"--kind-workers {self.kind_workers}: must be 0 or more")
        if self.backend == "existing" and str(self.jobs) not in (parallel.AUTO, "1"):
            # Each worker would shape the one cluster's nodes for its own scenario.
            problems.append(f"--jobs {self.jobs}: an existing cluster is shared, and each scenario shapes its nodes: use --jobs 1 (auto is 1 there)")
        if self.timeout_s is not None and self.timeout_s <= 0:
            problems.append(f"--timeout {self.timeout_s:g}s: must be greater than 0")
        try:
            impl_registry.implementation(self.implementation)
        except Exception as err:
            problems.append(str(err))
        found = self.selected_or_empty()
        assert self._loaded is not None
        # A file that does not load is never dropped quietly: the run refuses to start.
        problems += [f"invalid scenario: {p}" for p in self._loaded[2] if p.is_error]
        existing = [p for p in self.scenarios if pathlib.Path(p).exists()]
        if existing and not found:
            problems.append(f"no scenario under {', '.join(map(str, existing))} (scenario files are YAML files, each in a folder named after its suite)")
        known = {sc.suite for sc in found}
        for suite in self.suites:
            if suite not in known:
                problems.append(f"no suite {suite!r} under {', '.join(map(str, self.scenarios))}; suites: {', '.join(sorted(known))}")
        if self.keyword is not None and found and not problems:
            problems += keyword_problems(self.keyword, self.selected())
        return problems

    def preflight(self) -> list[str]:
        """What would make the run fail for reasons of its own, found before anything starts (run
        after validate): a reports folder it cannot write, a cluster it cannot reach."""
        problems = []
        try:
            self.reports.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.reports, prefix=".vck-write-check-"):
                pass
        except OSError as err:
            problems.append(f"--reports {self.reports} is not writable ({err.strerror or err}); the run's results would be lost")
        backend = registry.backend(self.backend, kubeconfig=self.kubeconfig, context=self.kube_context, host_address=self.host_address)
        check = getattr(backend, "preflight", None)
        if check is not None:
            problems += check()
        return problems

    def selected_or_empty(self) -> list[models.Scenario]:
        """Every scenario under the configured paths, loaded once per config."""
        key = tuple(str(p) for p in self.scenarios)
        if self._loaded is None or self._loaded[0] != key:
            found, problems = loader.load_tree([pathlib.Path(p) for p in self.scenarios if pathlib.Path(p).exists()])
            self._loaded = (key, found, problems)
        return self._loaded[1]

    def preloaded(self) -> dict[pathlib.Path, tuple[models.Scenario, list[loader.Problem]]]:
        """The selected scenarios by file, with each file's warnings: what pytest collects."""
        self.selected_or_empty()
        assert self._loaded is not None
        warnings: dict[str, list[loader.Problem]] = {}
        for problem in self._loaded[2]:
            if not problem.is_error:
                warnings.setdefault(problem.file, []).append(problem)
        return {sc.path.resolve(): (sc, warnings.get(str(sc.path), [])) for sc in self.selected()}

    def selected(self) -> list[models.Scenario]:
        found = self.selected_or_empty()
        if self.suites:
            found = [sc for sc in found if sc.suite in self.suites]
        return found

    def selected_paths(self) -> list[str]:
        return sorted(str(sc.path) for sc in self.selected())

    def workers(self) -> int:
        """The number of workers the run uses (`auto` resolved for this machine and selection)."""
        jobs = parallel.parse_jobs(str(self.jobs))
        if jobs == parallel.AUTO:
            if self.backend == "existing":
                return 1
            if self.backend == "kind":
                return parallel.auto_workers(len(self.selected()) * self.repeat, per_core=parallel.KIND_WORKERS_PER_CORE, per_worker_mib=parallel.KIND_WORKER_MIB)
            return parallel.auto_workers(len(self.selected()) * self.repeat)
        return int(jobs)

    def pytest_args(self, run_id: str) -> list[str]:
        args = [
            *self.selected_paths(),
            # Scenarios keep no files of pytest's: no cache folder in the project, and no
            # pytest-of-USER folder in the system's temporary one (xdist makes one for its workers
            # whenever pytest's tmp_path plugin is loaded).
            "-p", "no:cacheprovider",
            "-p", "no:tmpdir",
            "--rootdir", str(REPO_ROOT),
            "-o", "testpaths=",
            "--vck-impl", self.implementation,
            "--vck-backend", self.backend,
            "--vck-time-scale", str(self.time_scale),
            "--vck-report-dir", str(self.reports),
            "--vck-run-id", run_id,
            "--vck-progress",
            "--vck-repeat", str(self.repeat),
            *self._durations_args(),
            "--vck-stress", str(self.stress),
            # Where scenario files are: any folder given (not only one named `scenarios`).
            *(arg for path in self.scenarios for arg in ("--vck-scenarios", str(pathlib.Path(path).resolve()))),
        ]
        if self.kubeconfig:
            args += ["--vck-kubeconfig", self.kubeconfig]
        if self.kube_context:
            args += ["--vck-context", self.kube_context]
        if self.kind_workers:
            args += ["--vck-kind-workers", str(self.kind_workers)]
        if self.host_address:
            args += ["--vck-host-address", self.host_address]
        if self.keyword:
            args += ["-k", self.keyword]
        if self.collect_only:
            return [*args, "--collect-only", "-q"]
        workers = self.workers()
        if workers > 1:
            # worksteal: each worker starts on a contiguous share of the sorted scenarios (so
            # scenarios sharing a scheduler conf and node shapes stay together and the
            # implementation restarts rarely), and an idle worker takes half of a busy one's rest.
            args += ["-n", str(workers), "--dist", "worksteal"]
        args += ["-q"] if not self.verbose else ["-v"]
        return args


    def _durations_args(self) -> list[str]:
        """The durations the run orders its long scenarios by: the last whole run's report under
        `reports`, else the reference's committed one (none when neither exists)."""
        for candidate in (self.reports / "latest" / "report.json", REFERENCE_REPORT):
            if candidate.is_file():
                return ["--vck-durations", str(candidate)]
        return []


def keyword_problems(keyword: str, scenarios: Sequence[models.Scenario]) -> list[str]:
    """`-k` judged before anything starts (the toolchain, a cluster), with pytest's own expression
    language. pytest matches against the names of an item's parents, which depend on the rootdir;
    a scenario counts as matched when either its own names (id, file, suite folder) or every part
    of its path match, so only a selection pytest would surely leave empty is refused."""
    try:
        expression = pytest_expression.Expression.compile(keyword)
    except SyntaxError as err:
        return [f"-k {keyword!r} is not a valid expression: {err.msg}"]

    def matches(names: set[str]) -> bool:
        lowered = [n.lower() for n in names]
        return expression.evaluate(lambda sub, /, **_: any(sub.lower() in n for n in lowered))

    for sc in scenarios:
        own = {sc.id, sc.path.name, sc.path.parent.name}
        if matches(own) or matches(own | set(sc.path.resolve().parts)):
            return []
    return [f"no scenario matches -k {keyword!r}"]


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


# What `run` hands the pytest plugin in-process, and what the plugin hands back: the scenarios as
# `run` loaded them (path -> scenario and its warnings), and the run it wrote. A process that
# pytest-xdist started has neither and reads the files itself.
PRELOADED_KEY = pytest.StashKey[dict[pathlib.Path, tuple[models.Scenario, list[loader.Problem]]]]()
WRITTEN_KEY = pytest.StashKey[WrittenRun]()
# The run's own setup before pytest started (toolchain, the implementation's build), in seconds.
RUN_SETUP_KEY = pytest.StashKey[dict[str, float]]()


class RunCollector:
    """A plugin object given to `pytest.main`: it puts the loaded scenarios where the kit's plugin
    collects them, and takes the written run back once the session ends."""

    def __init__(self, preloaded: dict[pathlib.Path, tuple[models.Scenario, list[loader.Problem]]]) -> None:
        self.preloaded = preloaded
        self.setup_s: dict[str, float] = {}
        self.written: WrittenRun | None = None

    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[PRELOADED_KEY] = self.preloaded
        config.stash[RUN_SETUP_KEY] = self.setup_s

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.written = session.config.stash.get(WRITTEN_KEY, None)


def run(config: RunConfig, progress: Callable[[str], None] = _stderr) -> RunOutcome:
    """Run the selected scenarios and write the reports; `certified` decides the exit status.

    The run owns every cluster its workers start: when it ends, however it ends, whatever they left
    behind (a worker stopped in the middle of a scenario cannot clean up) is removed."""
    run_id = config.run_id or new_run_id()
    collector = RunCollector(config.preloaded())
    if config.collect_only:
        return RunOutcome(run_id, None, None, False, int(pytest.main(config.pytest_args(run_id), plugins=[collector])))
    if config.timeout_s is not None:
        interrupts.RECORD.arm_deadline(config.timeout_s)
    try:
        # The busy processes of --stress run for the whole run, its setup included.
        with stress.busy(config.stress), owners.claimed_for_this_run() as owner:
            try:
                # Every backend runs the toolchain's binaries (the embedded cluster; kwok on kind
                # and existing clusters): made ready here, where its progress is seen, rather
                # than in a worker behind pytest's capture; inside the deadline like the rest.
                collector.setup_s.update(_timed("toolchain", lambda: install.install(progress=progress)))
                # The implementation's own build too (Volcano's binaries: minutes, the first
                # time), once for every worker, its progress seen, its time the run's setup.
                prepare = getattr(impl_registry.implementation(config.implementation), "prepare", None)
                if prepare is not None:
                    collector.setup_s.update(_timed("implementation build", lambda: prepare(progress)))
                code = pytest.main(config.pytest_args(run_id), plugins=[collector])
                # The run is over: a deadline passing during the clean-up below changes nothing.
                interrupts.RECORD.disarm()
            except KeyboardInterrupt:
                # Before pytest started (the toolchain install): nothing ran.
                code = pytest.ExitCode.INTERRUPTED
            finally:
                # A second Ctrl-C waits until what the workers left is gone.
                with interrupts.deferred():
                    prune_clusters(PruneConfig(owner=owner))
    finally:
        interrupts.RECORD.disarm()
    written = collector.written
    if written is None:
        return RunOutcome(run_id, None, None, False, int(code))
    return RunOutcome(run_id, written.folder, written.run, score.certified(written.run), int(code))


def _timed(name: str, work: Callable[[], object]) -> dict[str, float]:
    began = time.monotonic()
    work()
    return {name: round(time.monotonic() - began, 1)}


@dataclasses.dataclass(frozen=True)
class ReportConfig:
    reports: pathlib.Path
    run_id: str
    implementation: str
    backend: str
    time_scale: float
    # time.time() when the run started.
    started: float
    workers: int = 1
    # How many scenarios were selected, and why the run ended early (empty: it did not).
    selected: int = 0
    interrupted: str = ""
    repeat: int = 1
    stress: int = 0
    setup_s: dict[str, float] = dataclasses.field(default_factory=dict)


def write_reports(config: ReportConfig, scenario_results: Sequence[results.ScenarioResult]) -> WrittenRun:
    """Called by the pytest plugin once every result is in (from all xdist workers)."""
    try:
        impl_versions = impl_registry.implementation(config.implementation).versions()
    except Exception as err:
        impl_versions = {"implementation": f"unknown ({err})"}
    meta = results.RunMetadata(
        run_id=config.run_id,
        implementation=config.implementation,
        backend=config.backend,
        versions={
            "kit": KIT_VERSION,
            "kubernetes": versions.KUBERNETES_VERSION,
            "etcd": versions.ETCD_VERSION,
            "kwok": versions.KWOK_VERSION,
            **impl_versions,
        },
        started_at=datetime.datetime.fromtimestamp(config.started, datetime.timezone.utc).isoformat(timespec="seconds"),
        wall_time_s=round(time.time() - config.started, 1),
        time_scale=config.time_scale,
        command=" ".join(shlex.quote(a) for a in sys.argv),
        workers=config.workers,
        selected=config.selected,
        interrupted=config.interrupted,
        repeat=config.repeat,
        stress=config.stress,
        setup_s=dict(config.setup_s),
    )
    # A repeated scenario's attempts become one verdict (FLAKY when they differ).
    combined = attempts.combine(scenario_results)
    run_result = results.RunResult(meta, tuple(sorted(combined, key=lambda r: (r.suite, r.id))))
    with interrupts.deferred():
        return WrittenRun(run_result, writer.write_all(run_result, config.reports))


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


def _kind_backend(state_root: pathlib.Path | None, progress: Callable[[str], None]) -> kind.KindBackend:
    return kind.KindBackend(state_root=state_root / "kind" if state_root else None, progress=progress)


def list_clusters(state_root: pathlib.Path | None = None) -> list[ClusterInfo]:
    """Every cluster the kit keeps state for under `state_root` (default: $VCK_STATE_DIR or the
    cache): embedded ones, and kind ones it created; with its owner and whether the owner still
    runs. Reading kind's needs no Docker (its containers' memory is not counted)."""
    out = []
    for backend in (embedded.EmbeddedBackend(state_root=state_root, progress=lambda _: None), _kind_backend(state_root, lambda _: None)):
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
    """Remove clusters left behind (a kind one with `kind delete cluster`); their names."""
    backends: dict[str, base.ClusterBackend] = {
        "embedded": embedded.EmbeddedBackend(state_root=config.state_root, progress=progress),
        "kind": _kind_backend(config.state_root, progress),
    }
    removed = []
    for info in list_clusters(config.state_root):
        if config.owner is not None:
            doomed = info.owner is not None and info.owner.same_process(config.owner)
        else:
            doomed = info.owner is not None and not info.owner_alive
        if doomed:
            backends[info.backend].down(info.name)
            removed.append(info.name)
    return removed


@dataclasses.dataclass
class ListConfig:
    scenarios: Sequence[pathlib.Path] = (DEFAULT_SCENARIOS,)

    def validate(self) -> list[str]:
        return [f"scenario path {p} does not exist" for p in self.scenarios if not pathlib.Path(p).exists()]


def list_scenarios(config: ListConfig) -> tuple[list[models.Scenario], list[loader.Problem]]:
    return loader.load_tree([pathlib.Path(p) for p in config.scenarios])


# --- scenario files ----------------------------------------------------------------------------------
@dataclasses.dataclass
class ValidateConfig:
    paths: Sequence[pathlib.Path]


def validate_scenarios(config: ValidateConfig) -> list[loader.Problem]:
    """Every problem and warning of the files under `paths` (valid when none is an error)."""
    return validate.validate_paths([pathlib.Path(p) for p in config.paths])


@dataclasses.dataclass
class NewConfig:
    suite: str
    name: str
    root: pathlib.Path = DEFAULT_SCENARIOS


def new_scenario(config: NewConfig) -> pathlib.Path:
    """A scenario file to start from, valid as written (scaffold.ScaffoldError says why not)."""
    return scaffold.new_scenario(pathlib.Path(config.root), config.suite, config.name)


# --- clusters ----------------------------------------------------------------------------------------
@dataclasses.dataclass
class ClusterConfig:
    name: str = "vck"
    backend: str = "embedded"
    # Node groups for `up` (nodes.parse's syntax); None: the default nodes.
    nodes: str | None = None
    kubeconfig: str | None = None
    context: str | None = None
    kind_workers: int = 0
    host_address: str | None = None

    def backend_for(self, progress: Callable[[str], None] | None = None) -> base.ClusterBackend:
        return registry.backend(
            self.backend, kubeconfig=self.kubeconfig, context=self.context, progress=progress,
            kind_workers=self.kind_workers, host_address=self.host_address,
        )


def cluster_up(config: ClusterConfig, progress: Callable[[str], None] | None = None) -> base.ClusterHandle:
    """Start the cluster (or reuse a healthy one of the same name); kept until `cluster_down`."""
    groups = nodes.parse(config.nodes)
    return config.backend_for(progress).up(config.name, groups)


def cluster_down(config: ClusterConfig, progress: Callable[[str], None] | None = None) -> None:
    config.backend_for(progress).down(config.name)


def cluster_status(config: ClusterConfig) -> base.ClusterStatus:
    return config.backend_for().status(config.name)


# --- the toolchain and kind's node image -------------------------------------------------------------
@dataclasses.dataclass
class ToolchainConfig:
    # Only these components (versions.COMPONENTS' names); empty: all.
    components: Sequence[str] = ()
    source: install.Source = "auto"


def install_toolchain(config: ToolchainConfig, progress: Callable[[str], None] = _stderr) -> dict[str, install.Resolved]:
    return install.install(config.components, source=config.source, progress=progress)


def toolchain_status() -> list[tuple[versions.Component, pathlib.Path | None]]:
    """Every pinned component and where the cache has it (None: missing)."""
    return [(comp, install.cached(comp)) for comp in versions.COMPONENTS]


@dataclasses.dataclass
class KindImageConfig:
    image: str = versions.KIND_NODE_IMAGE
    # Build it here even when present (or pullable).
    rebuild: bool = False


def kind_image(config: KindImageConfig, progress: Callable[[str], None] = _stderr) -> str:
    """Make kind's node image present; returns where it came from."""
    engine = docker.ensure(progress)
    if config.rebuild:
        node_image.build(engine, config.image, progress, force=True)
    else:
        node_image.ensure(engine, config.image, progress)
    return "built here" if node_image.is_static_cni(engine, config.image) else "kind's published image"


# --- benchmarks and comparisons ----------------------------------------------------------------------
def bench_scheduler(config: bench.BenchConfig, progress: Callable[[str], None]) -> bench_figures.Report:
    """The cluster's ceiling and each implementation's figures on embedded clusters of kwok nodes
    (ValueError: a config that cannot run)."""
    return bench.run(config, progress)


@dataclasses.dataclass
class DiffConfig:
    # Each a report.json, a run folder, or a run id under `reports` (`latest` too).
    run_a: str
    run_b: str
    reports: pathlib.Path = DEFAULT_REPORTS
    # The page's path; None: <reports>/diff-<A>-vs-<B>.html.
    out: pathlib.Path | None = None


@dataclasses.dataclass(frozen=True)
class DiffOutcome:
    table: str
    page: pathlib.Path
    differences: int


def diff_runs(config: DiffConfig) -> DiffOutcome:
    """Every scenario whose verdict differs between two runs: a text table and a page with both
    timelines (diff.DiffError: a run that cannot be read)."""
    reports_root = pathlib.Path(config.reports)
    run_a, run_b = diff.read(config.run_a, reports_root), diff.read(config.run_b, reports_root)
    found = diff.differences(run_a, run_b)
    out = config.out or reports_root / f"diff-{run_a.metadata.run_id}-vs-{run_b.metadata.run_id}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(diff.render(run_a, run_b, found), encoding="utf-8")
    return DiffOutcome(diff.text_table(run_a, run_b, found), out, len(found))
