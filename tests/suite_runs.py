"""Running `vck run` from a test and reading what it wrote: the helpers every suite test shares.

A suite test runs the real CLI in a subprocess (its own embedded cluster under the test's tmp
folder) and judges the report.json it writes, as a user's CI would.
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

from conformance.scenario import loader, models

REPO = pathlib.Path(__file__).resolve().parent.parent
# Broken builds fail sooner with shorter windows: a third of every window is plenty on the
# embedded cluster, and a window cut too short could only make a broken build fail, never pass.
BROKEN_TIME_SCALE = "0.35"


def constraint_pins() -> dict[str, str]:
    """constraints.txt as {normalised package name: exact version} (what `make` installs)."""
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin"
            pins[name.lower().replace("_", "-")] = version
    return pins


def vck_run(tmp_path: pathlib.Path, *args: str, env: dict[str, str] | None = None, timeout_s: float = 1500) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`vck run ARGS` with reports under tmp_path/reports/run; the process and the parsed report.
    One worker unless ARGS say otherwise: the test suite runs several of these side by side."""
    reports = tmp_path / "reports"
    jobs = [] if "--jobs" in args else ["--jobs", "1"]
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--reports", str(reports), "--run-id", "run", *jobs, *args],
        cwd=REPO, env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state"), **(env or {})},
        capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
    )
    report = reports / "run" / "report.json"
    assert report.exists(), f"no report written\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return proc, json.loads(report.read_text())


def worker_logs(folder: pathlib.Path, name: str) -> str:
    """A reference log of a run, all its workers' together (VCK_REFERENCE_WORKDIR keeps one
    folder per parallel worker; a single-worker run writes the log in the folder itself)."""
    return "".join(path.read_text(errors="replace") for path in sorted(folder.glob(f"**/{name}")))


@functools.cache
def shipped_scenarios() -> tuple[tuple[models.Scenario, ...], tuple[loader.Problem, ...]]:
    """The scenarios the kit ships and the loader's problems with them, loaded once per process
    (a load takes seconds, and helpers ask for one scenario at a time)."""
    scenarios, problems = loader.load_tree([REPO / "scenarios"])
    return tuple(scenarios), tuple(problems)


def pick_problems(suites: set[str], picks: tuple[str, ...], left_out: tuple[str, ...]) -> list[str]:
    """What is wrong with a fixed selection of the shipped scenarios of `suites`, given to `-k` as
    "a or b or c" (substrings of the ids): a pick that names no scenario, a pick that also
    selects another scenario, a pick that a word of `left_out` excludes."""
    scenarios, _ = shipped_scenarios()
    known = {sc.id for sc in scenarios if sc.suite in suites}
    picked = {sc_id for sc_id in known if any(pick in sc_id for pick in picks)}
    problems = [f"no scenario {pick}" for pick in picks if pick not in known]
    problems += [f"a pick also selects {sc_id}" for sc_id in sorted(picked - set(picks))]
    problems += [f"{pick} is left out ({word})" for pick in picks for word in left_out if word in pick]
    return problems


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {s["id"]: s["status"] for s in report["scenarios"]}


def elsewhere(report: dict[str, Any]) -> set[str]:
    """The kit's scenarios whose `volcano` range leaves out the release the run's implementation
    is (the reference models the latest), and those that need nodes that run containers where the
    run's backend lends none (only kind does): not applicable there."""
    release = report["run"]["versions"].get("release")
    lends = report["run"]["backend"] == "kind"
    scenarios, _ = shipped_scenarios()
    return {
        sc.id for sc in scenarios
        if (release and sc.releases is not None and not sc.releases.contains(release)) or (sc.real_nodes and not lends)
    }


def unexpected_verdicts(report: dict[str, Any]) -> dict[str, str]:
    """Each scenario whose verdict is not the one a conforming implementation gets: passed, or not
    applicable for a scenario of other releases. What a whole-suite test of the reference asserts
    is empty."""
    outside = elsewhere(report)
    wrong = {}
    for s in report["scenarios"]:
        expected = "not-applicable" if s["id"] in outside else "passed"
        if s["status"] != expected:
            wrong[s["id"]] = s["status"]
    return wrong


def explain(report: dict[str, Any]) -> str:
    """The scenarios that did not pass, with their reasons: the message of a failed assertion."""
    return json.dumps([(s["id"], s["status"], s["reason"]) for s in report["scenarios"] if s["status"] != "passed"], indent=1, ensure_ascii=False)


def volcano_jobs(scenario_id: str) -> dict[str, dict[str, Any]]:
    """The Volcano Job manifests a scenario's steps apply, by name."""
    scenarios, _ = shipped_scenarios()
    sc = next(s for s in scenarios if s.id == scenario_id)
    out: dict[str, dict[str, Any]] = {}
    for step in sc.steps:
        manifest = step.spec if step.action == "apply" else None
        if isinstance(manifest, dict) and manifest.get("kind") == "Job" and manifest.get("apiVersion", "").startswith("batch.volcano.sh"):
            out[manifest["metadata"]["name"]] = manifest
    return out


def replicas_by_job(scenario_id: str) -> dict[str, int]:
    return {name: sum(int(t.get("replicas", 0)) for t in job["spec"]["tasks"]) for name, job in volcano_jobs(scenario_id).items()}
