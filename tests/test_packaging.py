"""The kit as its users install it: compatible ranges in pyproject.toml with exact pins in
constraints.txt, and a wheel that runs from any folder with no clone beside it."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import sysconfig
import tomllib

import pytest
from packaging.requirements import Requirement

from tests import suite_runs

PYPROJECT = tomllib.loads((suite_runs.REPO / "pyproject.toml").read_text())


def _requirements() -> list[Requirement]:
    project = PYPROJECT["project"]
    return [Requirement(text) for text in project["dependencies"] + project["optional-dependencies"]["test"]]


def test_dependencies_are_ranges_and_constraints_pin_each_inside_its_range() -> None:
    pins = suite_runs.constraint_pins()
    for req in _requirements():
        assert not any(spec.operator in ("==", "===") for spec in req.specifier), f"{req}: an exact pin forces the user's environment; a range belongs in pyproject.toml"
        name = req.name.lower().replace("_", "-")
        assert name in pins, f"{req.name} has no pin in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"constraints.txt pins {req.name}=={pins[name]}, outside {req.specifier}"


@pytest.mark.cluster
def test_the_wheel_runs_the_gang_suite_from_an_empty_folder(tmp_path: pathlib.Path) -> None:
    """`python -m build` makes the wheel; a fresh virtualenv in a temporary folder gets it (and
    the dependencies this environment already has, through a .pth, so no index is needed); from
    an empty folder, `vck run --suite gang` certifies, its reports under that folder."""
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(dist), str(suite_runs.REPO)],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies from this environment's site-packages: a path in a .pth is added as it is
    # (its own .pth files, this clone's editable install among them, are not read).
    (site / "deps-from-the-test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    empty = tmp_path / "somewhere"
    empty.mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"VCK_STATE_DIR": str(tmp_path / "state"), "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}"}
    where = subprocess.run([str(python), "-c", "import conformance, reference_scheduler; print(conformance.__file__); print(reference_scheduler.__file__)"],
                           cwd=empty, env=env, capture_output=True, text=True, timeout=60)
    assert where.returncode == 0 and all(line.startswith(str(site)) for line in where.stdout.split()), where.stdout + where.stderr

    listed = subprocess.run([str(venv / "bin" / "vck"), "list"], cwd=empty, env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "gang-no-partial-gang" in listed.stdout, listed.stdout[-2000:] + listed.stderr[-2000:]

    run = subprocess.run([str(venv / "bin" / "vck"), "run", "--suite", "gang", "--run-id", "installed"], cwd=empty, env=env,
                         capture_output=True, text=True, timeout=1200, stdin=subprocess.DEVNULL)
    assert run.returncode == 0 and "\nCERTIFIED: reference" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((empty / "reports" / "installed" / "report.json").read_text())
    # Every gang scenario the installed kit ships passed (counted from the source tree it was built from).
    gang_scenarios = len(list((suite_runs.REPO / "scenarios" / "gang").glob("*.yaml")))
    assert report["summary"]["certified"] and report["summary"]["passed"] == gang_scenarios, (report["summary"], gang_scenarios)
    assert (empty / "reports" / "latest").resolve() == (empty / "reports" / "installed").resolve()
    assert sorted(p.name for p in empty.iterdir()) == ["reports"], "the run wrote nothing else into the folder it was started from"
