"""The scenario loader: every shipped scenario loads; every broken file gets one clear error."""

from __future__ import annotations

import io
import pathlib
import subprocess
import sys

import pytest

from conformance import api
from conformance.scenario import loader

BROKEN = pathlib.Path(__file__).parents[2] / "data" / "broken_scenarios"  # tests/data

# file -> (path inside the document, line, a phrase of the message)
EXPECTED = {
    "yaml-syntax.yaml": ("", 4, "not valid YAML"),
    "not-a-mapping.yaml": ("", 1, "expected a mapping with id, suite, title, level, cites and steps, got list"),
    "missing-cites.yaml": ("", 1, "missing required key 'cites'"),
    "bad-level.yaml": ("level", 4, "expected one of MUST, SHOULD, got \"MAY\""),
    "unknown-key.yaml": ("expectations", 7, "unknown key 'expectations'; expected one of: cites, cluster"),
    "two-actions.yaml": ("steps[0]", 7, "expected exactly one of: apply, patch"),
    "unknown-action.yaml": ("steps[1]", 8, "(got: sleep)"),
    "bad-duration.yaml": ("expect[0].within", 9, "expected a duration such as 30s, 500ms, 2m or 1.5h, got \"5 seconds\""),
    "negative-count.yaml": ("steps[0].wait.pods.count", 7, "expected an integer >= 0, or {min: N, max: M}, got -2"),
    "wrong-type.yaml": ("expect[0].pods.count", 8, "got \"two\""),
    "bad-cite.yaml": ("cites[0].seed", 6, "a seed file name such as 003_35c386466be32963.txt"),
    "duplicate-key.yaml": ("", 5, "duplicate key 'level'"),
    "empty.yaml": ("", 1, "the file is empty"),
    "measure-unknown-figure.yaml": ("steps[1].measure.less_than", 11, "names the figure 'with plugins', which no earlier measure step records (earlier: 'with plugin')"),
    "scenarios/gang/suite-mismatch.yaml": ("suite", 2, "the suite is 'queue' but the file is in the folder of suite 'gang'"),
    # Issue 15: typos that passed validation and were judged at run time.
    "bad-phase.yaml": ("expect[0].phase.is", 9, "got \"Runing\"; did you mean Running?"),
    "zero-window.yaml": ("expect[0].never", 10, "expected a window longer than 0s, got \"0s\""),
    "unknown-kind.yaml": ("expect[0].phase.object.kind", 9, "got \"Jbo\"; did you mean Job?"),
    "bad-quantity.yaml": ("cluster.nodes[0].memory", 8, "expected a Kubernetes quantity such as 8, 500m or 32Gi, got \"16 gigs\""),
    "judges-nothing.yaml": ("steps", 6, "the scenario judges nothing: expected an `expect` entry, a `wait` step, an `expect` step"),
    "scenarios/gang/nested/suite-mismatch-nested.yaml": ("suite", 2, "the suite is 'queue' but the file is in the folder of suite 'gang'"),
    "bad-regex.yaml": ("expect[0].condition.message", 9, "expected a regular expression, got \"(tasks in gang\": missing ), unterminated subpattern at position 0"),
}


def test_every_shipped_scenario_loads() -> None:
    found, problems = loader.load_tree([api.DEFAULT_SCENARIOS])
    assert problems == []
    assert found and all(sc.cites and sc.level for sc in found)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_broken_file_gets_one_clear_error(name: str) -> None:
    path, line, phrase = EXPECTED[name]
    with pytest.raises(loader.ScenarioError) as err:
        loader.load_file(BROKEN / name)
    problems = err.value.problems
    assert len(problems) == 1, [str(p) for p in problems]
    [problem] = problems
    assert problem.file.endswith(name) and problem.path == path and problem.line == line
    assert phrase in problem.message, problem.message
    assert str(problem).startswith(f"{BROKEN / name}:{line}: ")


def test_duplicate_ids_name_both_files() -> None:
    _, problems = loader.load_tree([BROKEN / "duplicate-id-a.yaml", BROKEN / "duplicate-id-b.yaml"])
    [problem] = problems
    assert "same-id" in problem.message and "duplicate-id-a.yaml" in problem.message and problem.file.endswith("duplicate-id-b.yaml")


def test_every_problem_in_a_file_is_reported() -> None:
    text = "id: x\nsuite: s\ntitle: t\nlevel: MAY\ncites: [{seed: nope}]\nsteps:\n  - sleep: 1s\nbogus: 1\n"
    with pytest.raises(loader.ScenarioError) as err:
        loader.load_stream(io.StringIO(text), "multi.yaml")
    paths = {p.path for p in err.value.problems}
    assert {"level", "cites[0].seed", "steps[0]", "bogus"} <= paths


def test_vck_validate_prints_one_line_per_file_and_no_traceback() -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(BROKEN)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.startswith(str(BROKEN))]
    files = {line.split(":", 1)[0] for line in lines}
    expected = len(list(BROKEN.rglob("*.yaml"))) - 1  # two files share the duplicate-id error
    assert len(files) == expected
    assert len(lines) == len(files)
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith(f"{expected} problems in {expected} files")


def test_vck_validate_accepts_the_shipped_scenarios() -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(api.DEFAULT_SCENARIOS)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("ok:"), proc.stderr


def test_vck_new_writes_a_valid_scenario(tmp_path: pathlib.Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "new", "mysuite", "my-case", "--root", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    scenario = loader.load_file(tmp_path / "mysuite" / "my-case.yaml")
    assert scenario.id == "mysuite-my-case" and scenario.suite == "mysuite"
    again = subprocess.run([sys.executable, "-m", "conformance.cli", "new", "mysuite", "my-case", "--root", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2 and "exists already" in again.stderr
