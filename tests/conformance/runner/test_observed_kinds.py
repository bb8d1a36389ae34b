"""The kinds a scenario's recorder watches: the usual ones always, CronJob, JobFlow and JobTemplate
only when the scenario names them (applies one, refers to one or judges one)."""

from __future__ import annotations

import io

from conformance.runner import scenario_run
from conformance.scenario import loader

HEAD = "id: x\nsuite: s\ntitle: t\nlevel: MUST\ncites: [{source: pkg/x.go}]\n"


def kinds(body: str) -> tuple[str, ...]:
    return scenario_run.observed_kinds(loader.load_stream(io.StringIO(HEAD + body), "case.yaml"))


def test_a_scenario_that_names_none_watches_the_usual_kinds() -> None:
    assert kinds("steps:\n- wait: {pods: {count: 1}}\n") == scenario_run.OBSERVED_KINDS


def test_a_kind_judged_in_an_expectation_is_watched() -> None:
    body = "steps:\n- wait: {pods: {count: 1}}\nexpect:\n- object: {object: {kind: CronJob, name: c}}\n  within: 5s\n"
    assert kinds(body) == (*scenario_run.OBSERVED_KINDS, "CronJob")


def test_kinds_applied_in_setup_and_steps_are_watched() -> None:
    body = (
        "setup:\n- {apiVersion: flow.volcano.sh/v1alpha1, kind: JobTemplate, metadata: {name: a}, spec: {}}\n"
        "steps:\n- apply: {apiVersion: flow.volcano.sh/v1alpha1, kind: JobFlow, metadata: {name: f}, spec: {flows: [{name: a}]}}\n"
        "- wait: {pods: {count: 1}}\n"
    )
    assert kinds(body) == (*scenario_run.OBSERVED_KINDS, "JobFlow", "JobTemplate")


def test_the_slices_an_endpoints_check_reads_are_watched() -> None:
    """`endpoints` names no kind: it reads the Service's EndpointSlices, in an expectation or a wait."""
    expected = (*scenario_run.OBSERVED_KINDS, "EndpointSlice")
    assert kinds("steps:\n- wait: {pods: {count: 1}}\nexpect:\n- endpoints: {service: s}\n  within: 5s\n") == expected
    assert kinds("steps:\n- wait: {endpoints: {service: s, count: 2}}\n") == expected
    assert kinds("steps:\n- wait: {pods: {count: 1}}\n- expect: {endpoints: {service: s}, within: 5s}\n") == expected


def test_a_kind_a_wait_step_judges_is_watched() -> None:
    assert kinds("steps:\n- wait: {object: {object: {kind: CronJob, name: c}}}\n") == (*scenario_run.OBSERVED_KINDS, "CronJob")
