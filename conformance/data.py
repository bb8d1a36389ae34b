"""Every data file the kit reads at run time, found one way: inside the installed packages.

The suites, schemas, kwok stages, capability files and CRDs ship as package data (pyproject.toml's
`package-data`), so a `pip install`ed kit has all of it and a clone reads the same files through
its editable install. The kit's own files are found with `importlib.resources`; the reference
implementation's (its CRDs and claims) by locating its package without importing it: the kit
treats the reference as a black box it starts as processes.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import pathlib


class DataMissing(FileNotFoundError):
    """A package the kit reads data from is not installed."""


def kit(*parts: str) -> pathlib.Path:
    """A file or folder of the `conformance` package (`kit("scenario", "scenario.schema.json")`)."""
    return pathlib.Path(str(importlib.resources.files("conformance").joinpath(*parts)))


def scenarios() -> pathlib.Path:
    """The kit's suites: one folder per suite, a YAML file per scenario."""
    return kit("scenarios")


def reference(*parts: str) -> pathlib.Path:
    """A file or folder of the reference implementation's package, found without importing it."""
    spec = importlib.util.find_spec("reference_scheduler")
    if spec is None or not spec.submodule_search_locations:
        raise DataMissing("the reference implementation (package reference_scheduler) is not installed")
    return pathlib.Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)


def fake_devices(*parts: str) -> pathlib.Path:
    """A file or folder of the fake devices' package (their profiles, the device plugin's module)."""
    spec = importlib.util.find_spec("fake_devices")
    if spec is None or not spec.submodule_search_locations:
        raise DataMissing("the fake devices (package fake_devices) are not installed")
    return pathlib.Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)
