"""Shared helpers for the kit's own tests. The cluster fixtures come from conformance.pytest_plugin."""

from __future__ import annotations

import os
import pathlib
import shutil

import pytest

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
