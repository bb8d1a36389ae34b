"""The kit's scenario plugin: scenario files as pytest items, their verdicts, the run's reports.

It is registered only when a run asks for scenarios (pytest_entry.py: `vck run`, its xdist
workers, `--vck`, `--vck-scenarios` or the `vck_scenarios` ini setting); a pytest run of any other
project never loads it.

- Collects every YAML file under the run's folders (or, with `--vck` alone, under any folder named
  `scenarios`) as a scenario item, sorted so scenarios that share a scheduler configuration run
  together and the implementation restarts as little as possible. Under pytest-xdist each worker
  has its own embedded cluster.
- The run's configuration (conformance.config.RunConfig) comes whole: from `vck run` in-process
  (api.bridge), to xdist's workers serialised once, or, for a plain pytest run, from the `--vck-*`
  options, which are made from the configuration's own fields.
- When the session ends, hands the results to `vck run`, or with `--vck-report-dir` writes
  report.json, junit.xml and index.html itself.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import time
from typing import Any, Iterator

import pytest

from conformance import api, interrupts, pytest_session, results
from conformance.api import bridge
from conformance.impl import base as impl_base
from conformance.report import explain, json_report
from conformance.runner import scenario_run
from conformance.scenario import loader, models

RESULTS_KEY = pytest.StashKey["list[results.ScenarioResult]"]()
STARTED_KEY = pytest.StashKey[float]()
PROGRESS_KEY = pytest.StashKey["Progress"]()
INTERRUPTED_KEY = pytest.StashKey[str]()
# Each worker's setup time (its cluster and implementation start), from its setup reports.
SETUP_KEY = pytest.StashKey[dict[str, float]]()


def pytest_configure(config: pytest.Config) -> None:
    # Hooks that get no config (a test report, an interruption) go to an object that holds this
    # run's: a pytest run inside another (pytester, a run started by a test) keeps its own.
    config.pluginmanager.register(RunHooks(config), RUN_HOOKS_NAME)
    # Which parallel worker of this run the process is, for what it starts (the reference keeps
    # one log folder per worker); a run's own controller clears what an enclosing run set.
    workerinput = getattr(config, "workerinput", None)
    if workerinput:
        os.environ[impl_base.WORKER_ENV] = str(workerinput["workerid"])
    else:
        os.environ.pop(impl_base.WORKER_ENV, None)
    config.stash[RESULTS_KEY] = []
    config.stash[STARTED_KEY] = time.time()
    config.stash[PROGRESS_KEY] = Progress()
    config.stash[SETUP_KEY] = {}
    # Bad settings are refused before anything runs, not at the first scenario.
    pytest_session.run_spec(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    pytest_session.close_session(config)
    hooks = config.pluginmanager.get_plugin(RUN_HOOKS_NAME)
    if hooks is not None:
        config.pluginmanager.unregister(hooks)


# --- scenario collection -----------------------------------------------------------------------------
def pytest_collect_file(file_path: pathlib.Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A scenario file: a YAML file under a folder the run names (`vck run`'s, or --vck-scenarios),
    or, for a plain `pytest scenarios/`, under a folder named `scenarios`."""
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    return ScenarioFile.from_parent(parent, path=file_path) if pytest_session.run_spec(parent.config).collects(file_path) else None


class ScenarioWarning(UserWarning):
    """A scenario that loads but names something the kit does not know (a capability, say)."""


class ScenarioFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        # `vck run` loaded the file already (api.RunCollector); a worker process reads it.
        preloaded = self.config.stash.get(bridge.PRELOADED_KEY, {}).get(self.path.resolve())
        try:
            scenario, warnings = preloaded or loader.read_file(self.path)
        except loader.ScenarioError as err:
            raise self.CollectError(str(err)) from None
        for warning in warnings:
            self.warn(ScenarioWarning(str(warning)))
        repeat = pytest_session.run_spec(self.config).config.repeat
        if repeat == 1:
            yield ScenarioItem.from_parent(self, name=scenario.id, scenario=scenario)
            return
        for attempt in range(1, repeat + 1):
            yield ScenarioItem.from_parent(self, name=f"{scenario.id}[attempt-{attempt}]", scenario=scenario, attempt=attempt)


class ScenarioFailed(Exception):
    def __init__(self, result: results.ScenarioResult) -> None:
        super().__init__(result.reason)
        self.result = result


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: models.Scenario, attempt: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.attempt = attempt
        self.result: results.ScenarioResult | None = None
        # What this item's setup started (the process's cluster and implementation), in seconds.
        self.setup_s: dict[str, float] = {}
        self.user_properties.append(("vck_level", scenario.level.value))

    def setup(self) -> None:
        """The process's cluster and implementation start in pytest's setup phase, so their time
        is the kit's setup and never part of the first scenario's duration. A scenario the
        implementation cannot take (not claimed) starts nothing; a failure to start is met again
        by the scenario, which reports it as an error."""
        session = pytest_session.session_of(self.config)
        implementation = session.implementation()
        backend = session.options.run.backend
        if (
            self.scenario.capabilities() - implementation.capabilities()
            or scenario_run.not_applicable(self.scenario, implementation)
            or scenario_run.backend_gap(self.scenario, backend.name, backend.real_node_capacity(), backend.images)
        ):
            return
        try:
            self.setup_s = pytest_session.session_of(self.config).prepare(self.scenario.scheduler)
        except Exception as err:  # the scenario meets it again and reports it as an error
            pytest_session.uncaptured(self.config)(f"vck: the kit's setup failed ({err.__class__.__name__}: {err}); the scenario will report it")

    def runtest(self) -> None:
        ctx = pytest_session.session_of(self.config).context()
        result = scenario_run.run(self.scenario, ctx, attempt=self.attempt)
        self.result = result
        self.user_properties.append(("vck_status", result.status.value))
        if result.status in (results.Status.NOT_CLAIMED, results.Status.NOT_APPLICABLE):
            pytest.skip(result.reason)
        if result.status is not results.Status.PASSED:
            raise ScenarioFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return describe(excinfo.value.result)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[pathlib.Path, int, str]:
        return self.path, 0, f"[{self.scenario.level.value}] {self.scenario.suite}/{self.scenario.id}"


def describe(result: results.ScenarioResult) -> str:
    """A failure as a reader needs it: the verdict, why, each failed check's expected versus
    observed and the timeline that led to it (report/explain.py, as `vck explain` prints it)."""
    return explain.text(result)


# A scenario an earlier run saw take this long (a CronJob's, counted in whole minutes) starts
# first: started last, it would hold one worker long after the others finished.
LONG_SCENARIO_S = 30.0


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long scenarios first (by an earlier run's durations, --vck-durations), longest first;
    then scenarios sharing a scheduler conf together, and within those the ones sharing node
    shapes, so a worker restarts the implementation and reshapes nodes as rarely as it can; the
    kit's own tests keep their order first. Every xdist worker sorts alike (the same file)."""
    hints_file = pytest_session.run_spec(config).durations
    hints = json_report.durations(hints_file) if hints_file else {}

    def key(item: pytest.Item) -> tuple[int, int, float, str, str, str, str]:
        if isinstance(item, ScenarioItem):
            sc = item.scenario
            known = hints.get(sc.id, 0.0)
            long_first = -known if known >= LONG_SCENARIO_S else 0.0
            # Repeats by attempt first: each pass over the scenarios follows the last, so the
            # attempts of one scenario land on different workers and never back to back.
            return (1, item.attempt, long_first, sc.scheduler_key(), repr((sc.nodes, sc.profile)), sc.suite, sc.id)
        return (0, 0, 0.0, "", "", "", "")

    items.sort(key=key)


# --- results across xdist workers and the report ---------------------------------------------------
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Each scenario's result rides on its test report: xdist sends the report to the controller
    as soon as the scenario ends, so whatever ran is in the run's report even if a worker is
    stopped before the session ends (Ctrl-C, a CI cancel)."""
    report = yield
    if isinstance(item, ScenarioItem) and call.when == "call" and item.result is not None:
        report.vck_result = json_report.scenario_to_dict(item.result)  # type: ignore[attr-defined]
    if isinstance(item, ScenarioItem) and call.when == "setup" and item.setup_s:
        report.vck_setup = dict(item.setup_s)  # type: ignore[attr-defined]
    return report


def _collect_result(config: pytest.Config, report: pytest.TestReport) -> None:
    if getattr(config, "workerinput", None) is not None:
        return
    data = getattr(report, "vck_result", None)
    if data is not None:
        config.stash[RESULTS_KEY].append(json_report.scenario_from_dict(data))
    config.stash[SETUP_KEY].update(getattr(report, "vck_setup", None) or {})


def _has_line(entry: Any) -> bool:
    try:
        return entry.lineno is not None
    except TypeError:  # an entry whose raw line number is None
        return False


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if getattr(config, "workerinput", None) is not None:
        # A worker stops its cluster here, before xdist tells the controller it finished: the
        # controller then gives it 10 s to exit before killing it, too short for a cluster's
        # stop, which left the cluster's state behind. Its results went to the controller with
        # each test report.
        pytest_session.close_session(config)
        return
    interrupted = config.stash.get(INTERRUPTED_KEY, "")
    if not interrupted and exitstatus == pytest.ExitCode.INTERRUPTED:
        interrupted = interrupts.reason()
    scenario_results: list[results.ScenarioResult] = config.stash[RESULTS_KEY]
    worker_setup: dict[str, float] = config.stash[SETUP_KEY]
    collected = bridge.Collected(
        results=list(scenario_results),
        started=config.stash[STARTED_KEY],
        workers=max(1, int(getattr(config.option, "numprocesses", None) or 1)),
        selected=config.stash[PROGRESS_KEY].total,
        interrupted=interrupted,
        setup_s=dict(worker_setup),
    )
    # `vck run` takes them and writes the reports (api.run); a plain pytest run writes its own.
    config.stash[bridge.COLLECTED_KEY] = collected
    spec = pytest_session.run_spec(config)
    if bridge.RUN_KEY not in config.stash and spec.config.reports is not None and (collected.results or interrupted):
        api.write(spec.config, spec.run_id or api.new_run_id(), collected)


@dataclasses.dataclass
class Progress:
    """The running tally behind `--vck-progress`, kept by the process that prints it."""

    total: int = 0
    done: int = 0
    tally: dict[str, int] = dataclasses.field(default_factory=dict)
    started: float = dataclasses.field(default_factory=time.monotonic)


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[PROGRESS_KEY].total = sum(isinstance(i, ScenarioItem) for i in session.items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Under xdist the controller collects nothing itself: the workers' collections say how many."""
    progress = node.config.stash[PROGRESS_KEY]
    progress.total = max(progress.total, sum(".yaml::" in i or ".yml::" in i for i in ids))


RUN_HOOKS_NAME = "vck-run-hooks"


class RunHooks:
    """The plugin's hooks that pytest calls without a config, bound to the config of their run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Record why the run ended early, and make the interruption's traceback one pytest can
        print (before its terminal reporter renders it)."""
        self.config.stash[INTERRUPTED_KEY] = interrupts.reason(excinfo.value)
        interrupts.drop_lineless_frames(excinfo.value)
        excinfo.traceback = excinfo.traceback.filter(_has_line)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Collects each scenario's result; with --vck-progress prints
        `[3/12 0:42] PASSED no-partial-gang (14.2s, kit 0.8s) | passed 3` per scenario (the
        scenario's own time, then the kit's around it), and a line for a worker's setup."""
        config = self.config
        _collect_result(config, report)
        if not pytest_session.run_spec(config).progress or getattr(config, "workerinput", None) is not None:
            return
        setup = getattr(report, "vck_setup", None)
        if setup:
            config.get_terminal_writer().line("setup: " + ", ".join(f"{k} {v:.1f}s" for k, v in setup.items()))
        props = dict(report.user_properties)
        if "vck_status" not in props or report.when != "call":
            return
        progress = config.stash[PROGRESS_KEY]
        progress.done += 1
        status = str(props["vck_status"])
        progress.tally[status] = progress.tally.get(status, 0) + 1
        tally = ", ".join(f"{k} {v}" for k, v in sorted(progress.tally.items()))
        minutes, seconds = divmod(int(time.monotonic() - progress.started), 60)
        writer = config.get_terminal_writer()
        result = getattr(report, "vck_result", None) or {}
        took = f"{result.get('duration_s', report.duration):.1f}s, kit {sum(v for k, v in (result.get('phases_s') or {}).items() if k in results.PHASES_OVERHEAD):.1f}s"
        writer.line(f"[{progress.done}/{progress.total or '?'} {minutes}:{seconds:02d}] {status.upper():<11} {report.nodeid.split('::')[-1]} ({took}) | {tally}")
