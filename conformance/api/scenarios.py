"""Scenario files: `vck list`, `vck validate`, `vck new`."""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Sequence

from conformance import config as run_config
from conformance import scaffold
from conformance.scenario import loader, models, validate


@dataclasses.dataclass
class ListConfig:
    scenarios: Sequence[pathlib.Path] = (run_config.DEFAULT_SCENARIOS,)

    def validate(self) -> list[str]:
        return [f"scenario path {p} does not exist" for p in self.scenarios if not pathlib.Path(p).exists()]


def list_scenarios(config: ListConfig) -> tuple[list[models.Scenario], list[loader.Problem]]:
    return loader.load_tree([pathlib.Path(p) for p in config.scenarios])


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
    # Your own suites' folder, under the current one (the kit's own suites are in its package).
    root: pathlib.Path = pathlib.Path("scenarios")
    # The template's shape (scaffold.SHAPES): a Job's phases, queues' shares, preemption.
    shape: str = scaffold.DEFAULT_SHAPE


def new_scenario(config: NewConfig) -> pathlib.Path:
    """A scenario file to start from, valid and passing on the reference as written
    (scaffold.ScaffoldError says why not)."""
    return scaffold.new_scenario(pathlib.Path(config.root), config.suite, config.name, config.shape)
