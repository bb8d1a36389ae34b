"""A repeated scenario's verdict: its attempts combined (FLAKY when they differ), scored, written."""

from __future__ import annotations

import dataclasses
import json
import pathlib
import xml.etree.ElementTree as ET

import jsonschema

from conformance import results
from conformance.report import attempts, html, json_report, junit, score
from tests.conformance.report import sample_run

SCHEMA = json.loads((pathlib.Path(json_report.__file__).with_name("report.schema.json")).read_text())
PASSED, FAILED, ERROR = results.Status.PASSED, results.Status.FAILED, results.Status.ERROR


def attempt(id_: str, n: int, status: results.Status, **extra: object) -> results.ScenarioResult:
    return sample_run.scenario(id_, "gang", status, attempt=n, reason=f"{id_} attempt {n} {status.value}", **extra)


def run_of(scenarios: list[results.ScenarioResult], repeat: int) -> results.RunResult:
    meta = dataclasses.replace(sample_run.run().metadata, repeat=repeat, selected=len(scenarios))
    return results.RunResult(meta, tuple(attempts.combine(scenarios)))


def test_attempts_that_agree_are_one_verdict_and_never_flaky() -> None:
    for status in (PASSED, FAILED, ERROR):
        [combined] = attempts.combine([attempt("a", n, status) for n in (2, 1, 3)])
        assert combined.status is status
        assert [a.attempt for a in combined.attempts] == [1, 2, 3]
        assert "all 3 attempts" in combined.reason


def test_attempts_that_differ_are_flaky_with_the_first_failing_one_as_evidence() -> None:
    failing_check = results.Check("the pods run", False, "within 5s: 2 Running", "not by 5s: 1 Running", 5.0)
    [combined] = attempts.combine([
        attempt("a", 1, PASSED),
        attempt("a", 2, FAILED, checks=(failing_check,)),
        attempt("a", 3, PASSED),
    ])
    assert combined.status is results.Status.FLAKY
    assert combined.checks == (failing_check,)
    assert "passed 2, failed 1" in combined.reason and "attempt 2 failed" in combined.reason
    assert attempts.attempts_text(combined) == "passed, failed, passed"


def test_a_scenario_run_once_is_left_as_it_is() -> None:
    once = attempt("a", 1, FAILED)
    assert attempts.combine([once, attempt("b", 1, PASSED)])[0] is once


def test_a_flaky_must_scenario_is_never_certified_and_weighs_as_a_failure() -> None:
    flaky = run_of([attempt("a", 1, PASSED), attempt("a", 2, FAILED), attempt("b", 1, PASSED), attempt("b", 2, PASSED)], repeat=2)
    tally = score.tally(flaky.scenarios)
    assert (tally.passed, tally.flaky, tally.must_passed, tally.must_claimed) == (1, 1, 1, 2)
    assert tally.score == 0.5
    assert not score.certified(flaky)
    steady = run_of([attempt("a", 1, PASSED), attempt("a", 2, PASSED)], repeat=2)
    assert score.certified(steady)


def test_every_attempt_counts_for_a_whole_run() -> None:
    """A repeated run selects every attempt: one attempt short is an incomplete run."""
    short = run_of([attempt("a", 1, PASSED), attempt("a", 2, PASSED)], repeat=2)
    short = dataclasses.replace(short, metadata=dataclasses.replace(short.metadata, selected=3))
    assert score.missing(short) == 1 and not score.certified(short)


def test_reports_show_every_attempt_of_a_flaky_scenario(tmp_path: pathlib.Path) -> None:
    timeline = sample_run.TIMELINE
    run = run_of([
        attempt("a", 1, PASSED, checks=(results.Check("the pods run", True, "within 5s", "2 Running", 1.0),), timeline=timeline),
        attempt("a", 2, FAILED, checks=(results.Check("the pods run", False, "within 5s", "not by 5s: 1 Running", 5.0),), timeline=timeline),
    ], repeat=2)
    data = json_report.to_dict(run)
    jsonschema.validate(data, SCHEMA)
    assert data["summary"]["flaky"] == 1 and data["summary"]["certified"] is False
    [entry] = data["scenarios"]
    assert entry["status"] == "flaky" and [a["status"] for a in entry["attempts"]] == ["passed", "failed"]
    assert json_report.from_dict(data) == run

    junit.write(run, tmp_path / "junit.xml")
    case = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite/testcase")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "ScenarioFlaky"
    assert "attempt 1: PASSED" in (failure.text or "") and "not by 5s: 1 Running" in (failure.text or "")

    page = html.render(run)
    assert "Flaky: attempts that ended differently" in page
    assert page.count('class="attempt"') == 2 and "not by 5s: 1 Running" in page and "2 Running" in page
