"""The pytest plugin (conformance.pytest_plugin) in-process with pytester: what it collects as a
scenario, how it refuses bad files and options, and a scenario run to its report."""

from __future__ import annotations

import json
import shutil

import pytest

from conformance.toolchain import cache
from tests import suite_runs

# pytester points HOME at its own folder, where the toolchain's cache would be empty: the inner
# run is given this one (read now, before any test changes HOME).
TOOLCHAIN_CACHE = cache.cache_dir()

SCENARIO = suite_runs.REPO / "scenarios" / "admission" / "duplicate-task-name.yaml"
GANG = suite_runs.REPO / "scenarios" / "gang" / "no-partial-gang.yaml"
PLAIN = ("-p", "no:cacheprovider", "-p", "no:xdist")
# A run of scenarios asks for them (the plugin is inert otherwise).
SCENARIOS = ("--vck", *PLAIN)


def test_yaml_under_a_scenarios_folder_is_collected_as_one_item_per_file(pytester: pytest.Pytester) -> None:
    for src, suite in ((SCENARIO, "admission"), (GANG, "gang")):
        folder = pytester.path / "scenarios" / suite
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, folder / src.name)
    (pytester.path / "other").mkdir()
    shutil.copy(GANG, pytester.path / "other" / "not-a-scenario.yaml")  # outside any scenarios folder
    result = pytester.runpytest_inprocess("--collect-only", "-q", *SCENARIOS)
    result.assert_outcomes()
    ids = sorted(line.split("::")[-1] for line in result.outlines if "::" in line)
    assert ids == ["admission-duplicate-task-name", "gang-no-partial-gang"], result.outlines


def test_vck_scenarios_collects_any_folder_and_only_it(pytester: pytest.Pytester) -> None:
    mine = pytester.path / "my-suites" / "checks"
    mine.mkdir(parents=True)
    shutil.copy(SCENARIO, mine / "dup.yaml")
    (pytester.path / "scenarios" / "gang").mkdir(parents=True)
    shutil.copy(GANG, pytester.path / "scenarios" / "gang" / GANG.name)
    result = pytester.runpytest_inprocess("--collect-only", "-q", "--vck-scenarios", str(pytester.path / "my-suites"), *PLAIN)
    assert [line.split("::")[-1] for line in result.outlines if "::" in line] == ["admission-duplicate-task-name"], result.outlines


def test_repeats_interleave_by_attempt_and_known_long_scenarios_go_first(pytester: pytest.Pytester) -> None:
    """`--vck-repeat 2`: every scenario once, then every scenario again (so no scenario's attempts
    run back to back); an earlier report's long scenario starts each pass (`--vck-durations`)."""
    for src, suite in ((SCENARIO, "admission"), (GANG, "gang")):
        folder = pytester.path / "scenarios" / suite
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, folder / src.name)
    earlier = pytester.path / "earlier.json"
    earlier.write_text(json.dumps({"scenarios": [{"id": "gang-no-partial-gang", "duration_s": 45.0}, {"id": "admission-duplicate-task-name", "duration_s": 0.5}]}))
    result = pytester.runpytest_inprocess("--collect-only", "-q", "--vck-repeat", "2", "--vck-durations", str(earlier), *SCENARIOS)
    ids = [line.split("::")[-1] for line in result.outlines if "::" in line]
    assert ids == [
        "gang-no-partial-gang[attempt-1]", "admission-duplicate-task-name[attempt-1]",
        "gang-no-partial-gang[attempt-2]", "admission-duplicate-task-name[attempt-2]",
    ], result.outlines
    once = pytester.runpytest_inprocess("--collect-only", "-q", *SCENARIOS)
    assert [line.split("::")[-1] for line in once.outlines if "::" in line] == ["admission-duplicate-task-name", "gang-no-partial-gang"]


def test_a_bad_file_is_a_collection_error_that_names_the_problem(pytester: pytest.Pytester) -> None:
    folder = pytester.path / "scenarios" / "gang"
    folder.mkdir(parents=True)
    (folder / "broken.yaml").write_text("id: gang-broken\nsuite: gang\ntitle: x\nlevel: OFTEN\n")
    result = pytester.runpytest_inprocess("--collect-only", "-q", *SCENARIOS)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # collection errors stop the session
    text = result.stdout.str()
    assert "ERROR collecting" in text and "broken.yaml" in text and "level" in text, text


def test_bad_options_are_usage_errors(pytester: pytest.Pytester) -> None:
    (pytester.path / "scenarios" / "admission").mkdir(parents=True)
    shutil.copy(SCENARIO, pytester.path / "scenarios" / "admission" / SCENARIO.name)
    result = pytester.runpytest_inprocess("--vck-time-scale", "0", *SCENARIOS)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--time-scale 0.0: must be greater than 0" in result.stderr.str()
    repeat = pytester.runpytest_inprocess("--vck-repeat", "0", *SCENARIOS)
    assert repeat.ret == pytest.ExitCode.USAGE_ERROR and "--repeat 0: must be at least 1" in repeat.stderr.str()


@pytest.mark.cluster
def test_a_scenario_runs_and_its_report_is_written(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(TOOLCHAIN_CACHE))
    (pytester.path / "scenarios" / "admission").mkdir(parents=True)
    shutil.copy(SCENARIO, pytester.path / "scenarios" / "admission" / SCENARIO.name)
    reports = pytester.path / "reports"
    result = pytester.runpytest_inprocess("--vck-report-dir", str(reports), "--vck-run-id", "r1", "--vck-progress", "--vck-cluster-name", "vck-pytester", *SCENARIOS)
    result.assert_outcomes(passed=1)
    assert any("[1/1" in line and "PASSED" in line and "admission-duplicate-task-name" in line for line in result.outlines), result.outlines
    report = json.loads((reports / "r1" / "report.json").read_text())
    assert [(s["id"], s["status"]) for s in report["scenarios"]] == [("admission-duplicate-task-name", "passed")]
    assert (reports / "r1" / "junit.xml").is_file() and (reports / "latest").exists()


FOREIGN_TEST = """
import sys

def test_my_own_thing():
    assert 1 + 1 == 2

def test_the_kit_stayed_out():
    # The kit is installed (its entry point is loaded) but nothing of its scenario plugin is.
    loaded = [m for m in ("conformance.pytest_plugin", "conformance.pytest_session", "kubernetes", "conformance.api") if m in sys.modules]
    assert loaded == [], loaded
"""


def test_a_foreign_project_with_a_scenarios_folder_runs_its_own_pytest_unaffected(pytester: pytest.Pytester) -> None:
    """The kit installed beside another project: that project's `scenarios/` YAML is none of the
    kit's business unless the run asks for scenarios, and the kit imports nothing heavy."""
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "login.yaml").write_text("steps:\n  - open: /login\n  - type: {user: me}\n")
    pytester.makepyfile(test_mine=FOREIGN_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "vck" not in result.stdout.str().lower().replace("vck_", "")
    # Asked for scenarios, the same folder is collected as the kit's, and refused as not one.
    asked = pytester.runpytest_subprocess("--vck", "-p", "no:cacheprovider")
    assert asked.ret != 0 and "missing required key 'id'" in asked.stdout.str() + asked.stderr.str()
