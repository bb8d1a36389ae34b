"""A failure explained in the terminal: each failed check's expected and observed, and the slice of
the timeline that led to it (the kinds the check looked at, and the steps, up to its moment)."""

from __future__ import annotations

import io

from conformance import results
from conformance.report import explain, json_report
from conformance.runner import scenario_run
from conformance.scenario import loader, models


def entry(t: float, kind: str, name: str, event: str = "MODIFIED", **summary: object) -> results.TimelineEntry:
    return results.TimelineEntry(t, event, kind, "ns-1", name, dict(summary))


TIMELINE = (
    entry(0.1, "Step", "apply Job big", event="STEP"),
    entry(0.2, "Job", "big", phase="Pending"),
    *(entry(0.3 + i / 100, "Pod", f"big-{i}", phase="Pending", node=None) for i in range(14)),
    entry(0.5, "Queue", "default", state="Open"),
    entry(9.0, "Pod", "late", phase="Running"),
)
CHECKS = (
    results.Check("the job exists", True, "Job big exists", "Job big exists", 0.2, ("Job",)),
    results.Check("every pod runs", False, "within 5s: exactly 12 Running pods", "not by 5s: 0 matching", 5.2, ("Pod",)),
)


def failed(**changes: object) -> results.ScenarioResult:
    base = results.ScenarioResult(
        id="mine-big", suite="mine", title="Big runs", level=results.Level.MUST, cites=("source: pkg/x.go",), requires=(), path="/s/mine/big.yaml",
        status=results.Status.FAILED, reason="1 of 2 checks failed", duration_s=5.2, checks=CHECKS, timeline=TIMELINE,
    )
    return base.__class__(**{**base.__dict__, **changes})


def test_a_failed_check_shows_what_led_to_it() -> None:
    said = explain.text(failed())
    assert said.startswith("FAILED [MUST] mine/mine-big: Big runs\n  file: /s/mine/big.yaml\n  reason: 1 of 2 checks failed")
    assert "FAIL 2. every pod runs (at 5.2s)" in said and "expected: within 5s: exactly 12 Running pods" in said and "observed: not by 5s: 0 matching" in said
    # Only the passed check's line is left out; only Pods (and steps) before its moment show.
    assert "the job exists" not in said and "Queue" not in said and "Job big" not in said and "late" not in said
    shown = [line for line in said.splitlines() if "MODIFIED Pod" in line]
    assert len(shown) == explain.SLICE_ENTRIES and shown[-1].strip().startswith("0.4s MODIFIED Pod big-13  phase=Pending"), shown
    assert "ok   1. the job exists" in explain.text(failed(), explain.Options(all_checks=True))


def test_a_check_of_unknown_kinds_shows_every_kind_and_a_passed_run_has_nothing_to_explain() -> None:
    anything = failed(checks=(results.Check("c", False, "e", "o", 1.0),))
    assert "timeline (every kind, and the steps)" in explain.text(anything) and "Queue default" in explain.text(anything)
    run = results.RunResult(results.RunMetadata("r1", "reference", "embedded", {}, "", 1.0, 1.0, ""), (failed(status=results.Status.PASSED),))
    assert "nothing to explain" in explain.run_text(run)
    assert "FAILED" not in explain.run_text(run) and "mine-big" in explain.run_text(run, ["mine-big"])


def test_looked_at_survives_the_report() -> None:
    back = json_report.scenario_from_dict(json_report.scenario_to_dict(failed()))
    assert back.checks == CHECKS


SCENARIO = """id: mine-kinds
suite: mine
title: t
level: MUST
cites: [{source: pkg/x.go}]
steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
  - wait: {phase: {object: {kind: Job, name: j}, is: Running}}
expect:
  - {describe: pods, pods: {select: {job: j}, count: 1}, within: 5s}
  - {describe: event, event: {object: {kind: PodGroup, job: j}, reason: Evict}, within: 5s}
"""


def test_a_check_looks_at_the_kinds_its_predicate_reads() -> None:
    sc = loader.load_stream(io.StringIO(SCENARIO), "kinds.yaml")
    wait = sc.steps[1].spec
    assert isinstance(wait, models.Predicate)
    assert scenario_run.looked_at(wait) == ("Job",)
    assert [scenario_run.looked_at(e.predicate) for e in sc.expect] == [("Pod",), ("Event", "PodGroup")]
