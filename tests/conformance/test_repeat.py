"""`vck run --repeat N`: a deliberately racy scenario is reported FLAKY with every attempt's
evidence and the run is not certified; a stable one beside it is never called FLAKY."""

from __future__ import annotations

import pathlib
import xml.etree.ElementTree as ET

import pytest

from tests import suite_runs

# Its `vck run` starts embedded clusters (no cluster fixture says so): not for `make check`.
pytestmark = pytest.mark.cluster

RACY = pathlib.Path(__file__).resolve().parent.parent / "data" / "racy_scenarios"
# coin-toss passes half of its attempts, each independently: all 16 alike happens twice in 65536.
ATTEMPTS = 16


def test_a_racy_scenario_is_flaky_with_both_verdicts_and_a_stable_one_never(tmp_path: pathlib.Path) -> None:
    proc, report = suite_runs.vck_run(tmp_path, str(RACY), "--repeat", str(ATTEMPTS), "--jobs", "2", timeout_s=900)
    by_id = {s["id"]: s for s in report["scenarios"]}
    coin, steady = by_id["coin-toss"], by_id["steady"]

    assert coin["status"] == "flaky", suite_runs.explain(report)
    assert len(coin["attempts"]) == ATTEMPTS
    passed = [a for a in coin["attempts"] if a["status"] == "passed"]
    failed = [a for a in coin["attempts"] if a["status"] == "failed"]
    assert passed and failed and len(passed) + len(failed) == ATTEMPTS
    # Each attempt keeps its own evidence: the namespace it judged, and the check's verdict.
    assert all(a["checks"][-1]["passed"] for a in passed)
    assert all(not a["checks"][-1]["passed"] and "metadata.namespace" in a["checks"][-1]["observed"] for a in failed)
    assert {a["attempt"] for a in coin["attempts"]} == set(range(1, ATTEMPTS + 1))

    assert steady["status"] == "passed", suite_runs.explain(report)
    assert [a["status"] for a in steady["attempts"]] == ["passed"] * ATTEMPTS

    assert report["summary"]["flaky"] == 1 and report["summary"]["certified"] is False
    assert report["run"]["repeat"] == ATTEMPTS and report["run"]["selected"] == 2 * ATTEMPTS
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "FLAKY [MUST] coin/coin-toss" in proc.stdout

    folder = tmp_path / "reports" / "run"
    cases = {c.get("name", "").split(":")[0]: c for c in ET.parse(folder / "junit.xml").getroot().iter("testcase")}
    failure = cases["[MUST] coin-toss"].find("failure")
    assert failure is not None and failure.get("type") == "ScenarioFlaky"
    assert cases["[MUST] steady"].find("failure") is None
    page = (folder / "index.html").read_text()
    assert "Flaky: attempts that ended differently" in page and page.count('class="attempt"') >= ATTEMPTS
