"""What `vck run` hands pytest in-process, and what pytest hands back: the whole run configuration
once (in the config's stash; pytest-xdist's workers get it serialised once, through xdist's
`workerinput`), the scenarios as `vck run` loaded them, and the run's results when the session
ends. Nothing is rebuilt from flags, and no report is read back from disk (as pytest's own
junitxml keeps its state in the config's stash)."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import TYPE_CHECKING, Any

import pytest

from conformance import config as run_config
from conformance import results

if TYPE_CHECKING:
    from conformance.scenario import loader, models

    Preloaded = dict[pathlib.Path, tuple[models.Scenario, list[loader.Problem]]]

# The key of the run in xdist's workerinput (a JSON text: the configuration and the run id).
WORKER_INPUT = run_config.WORKER_INPUT


@dataclasses.dataclass
class RunSpec:
    """A run as pytest sees it: its configuration, its id, and whether a progress line is printed
    per scenario (`vck run`'s; a plain pytest run asks with --vck-progress)."""

    config: run_config.RunConfig
    run_id: str | None
    progress: bool = False
    # The report whose durations put long scenarios first, resolved once for every process
    # (xdist's workers must sort their items alike).
    durations: pathlib.Path | None = None
    # Where scenario files are collected: the configuration's folders, whatever their names; or,
    # for a plain pytest run that names none, any YAML file under a folder named `scenarios`.
    any_folder: bool = True

    @classmethod
    def of(cls, config: run_config.RunConfig, run_id: str | None, progress: bool = False, any_folder: bool = True) -> RunSpec:
        return cls(config, run_id, progress, config.durations_report(), any_folder)

    def collects(self, path: pathlib.Path) -> bool:
        """Whether a YAML file is one of the run's scenarios."""
        if not self.any_folder:
            return "scenarios" in path.parent.parts
        resolved = path.resolve()
        return any(resolved == root or root in resolved.parents for root in (pathlib.Path(r).resolve() for r in self.config.scenarios))

    def to_json(self) -> str:
        return json.dumps({
            "config": json.loads(self.config.to_json()), "run_id": self.run_id, "progress": self.progress,
            "durations": str(self.durations) if self.durations else None, "any_folder": self.any_folder,
        })

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        data = json.loads(text)
        durations = pathlib.Path(data["durations"]) if data.get("durations") else None
        return cls(run_config.from_plain(data["config"]), data["run_id"], bool(data["progress"]), durations, bool(data["any_folder"]))


@dataclasses.dataclass
class Collected:
    """What the session gathered: every scenario run's result (from every worker, attempts
    separate), and the facts the report needs about the run itself."""

    results: list[results.ScenarioResult]
    # time.time() when the session started.
    started: float
    workers: int
    # How many scenario runs were selected (attempts included).
    selected: int
    # Why the run ended early ("" when it did not).
    interrupted: str
    # Each worker's setup (`<worker> cluster`, `<worker> implementation`), in seconds.
    setup_s: dict[str, float]


RUN_KEY = pytest.StashKey[RunSpec]()
PRELOADED_KEY = pytest.StashKey["Preloaded"]()
COLLECTED_KEY = pytest.StashKey[Collected]()


class RunCollector:
    """A plugin object given to `pytest.main` by `vck run`: it puts the run and the loaded
    scenarios where the kit's plugin finds them, ships the run to xdist's workers, and takes the
    results back once the session ends."""

    def __init__(self, spec: RunSpec, preloaded: "Preloaded") -> None:
        self.spec = spec
        self.preloaded = preloaded
        self.collected: Collected | None = None
        self.selected_count: int | None = None
        # The scenario ids the collection selected (after -k), in pytest's order.
        self.selected_ids: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        """Before the kit's plugin configures itself: it reads the run from here."""
        config.stash[RUN_KEY] = self.spec
        config.stash[PRELOADED_KEY] = self.preloaded

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist, before it starts a worker: the run goes along, serialised once."""
        node.workerinput[WORKER_INPUT] = self.spec.to_json()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.selected_count = len(session.items)
        self.selected_ids = [item.scenario.id for item in session.items if hasattr(item, "scenario")]

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.collected = session.config.stash.get(COLLECTED_KEY, None)
