"""The three report formats written from one result tree: JSON round trip, JUnit, self-contained HTML."""

from __future__ import annotations

import json
import pathlib
import xml.etree.ElementTree as ET

import jsonschema

from conformance import results
from conformance.report import html, json_report, junit, score, writer
from tests.conformance.report.sample_run import run

SCHEMA = json.loads((pathlib.Path(json_report.__file__).with_name("report.schema.json")).read_text())


def test_json_round_trip_and_schema() -> None:
    original = run()
    data = json_report.to_dict(original)
    jsonschema.validate(data, SCHEMA)
    assert json_report.from_dict(json.loads(json.dumps(data))) == original
    assert data["summary"]["certified"] is False
    assert data["suites"]["gang"]["failed"] == 1 and data["suites"]["queue"]["not_claimed"] == 1


def test_scoring_weights_must_over_should_and_never_certifies_an_empty_run() -> None:
    r = run()
    overall = score.tally(r.scenarios)
    assert (overall.passed, overall.failed, overall.not_claimed, overall.error) == (1, 1, 1, 1)
    assert overall.score == 0.5 and overall.must_claimed == 3 and overall.must_passed == 1
    empty = results.RunResult(r.metadata, ())
    assert not score.certified(empty)
    only_passed = results.RunResult(r.metadata, (r.scenarios[0],))
    assert score.certified(only_passed)
    with_error = results.RunResult(r.metadata, (r.scenarios[0], r.scenarios[3]))
    assert not score.certified(with_error), "an error is not a pass"


def test_junit(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "junit.xml"
    junit.write(run(), path)
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("4", "1", "1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    failed = cases["[MUST] gang-b: title of gang-b"]
    failure = failed.find("failure")
    assert failure is not None and "expected: never within 15s" in (failure.text or "")
    assert cases["[SHOULD] queue-a: title of queue-a"].find("skipped") is not None


def test_junit_of_an_interrupted_run_has_an_error_for_the_run(tmp_path: pathlib.Path) -> None:
    done = run()
    cut = results.RunResult(results.RunMetadata(**{**done.metadata.__dict__, "selected": 10, "interrupted": "SIGTERM"}), done.scenarios)
    path = tmp_path / "junit.xml"
    junit.write(cut, path)
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("errors")) == ("5", "2")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["interrupted"] == "SIGTERM" and props["certified"] == "false"
    error = {c.get("name"): c for c in suite.iter("testcase")}["the run"].find("error")
    assert error is not None and error.get("message") == "interrupted by SIGTERM: 6 of 10 selected scenarios have no verdict; not certified"
    # A run that ran to the end has no such case.
    junit.write(done, path)
    assert "the run" not in {c.get("name") for c in ET.parse(path).getroot().iter("testcase")}


def test_html_is_self_contained_escaped_and_shows_the_failure() -> None:
    page = html.render(run())
    assert 'id="summary"' in page and "NOT CERTIFIED" in page and 'id="suites"' in page
    assert "held at 0.2s: 1 matching" in page and "never within 15s" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    # Self-contained: no scripts, stylesheets or images from anywhere.
    assert "<script" not in page and "<link" not in page and 'src="' not in page
    assert page.count("<svg") >= 1
    assert "node-a" in page and "node-b" in page
    assert page.index("Failures and errors") < page.index("Passed")
    # Every figure in one table under the suites, linked to its scenario.
    assert page.index('id="figures"') < page.index("Failures and errors")
    assert '<td><a href="#queue-b">queue-b</a></td><td>fragmented nodes</td><td>3</td>' in page


def test_writer_writes_three_files_and_latest(tmp_path: pathlib.Path) -> None:
    folder = writer.write_all(run(), tmp_path)
    assert {p.name for p in folder.iterdir()} == {"report.json", "junit.xml", "index.html"}
    assert (tmp_path / "latest").resolve() == folder.resolve()
    second = results.RunResult(results.RunMetadata(**{**run().metadata.__dict__, "run_id": "run-2"}), run().scenarios)
    writer.write_all(second, tmp_path)
    assert (tmp_path / "latest").resolve() == (tmp_path / "run-2").resolve()
