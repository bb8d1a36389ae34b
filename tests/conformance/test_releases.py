"""Scenarios know which Volcano releases they apply to (`volcano: '>=1.14'`): the loader checks the
range, and a scenario outside the implementation's release is "not applicable", shown, never
counted, distinct from not claimed."""

from __future__ import annotations

import io
import pathlib

import pytest

from conformance.impl import reference
from conformance.scenario import loader, releases
from tests import suite_runs

RELEASE_SCENARIOS = suite_runs.REPO / "tests" / "data" / "release_scenarios"
HEAD = "id: r\nsuite: s\ntitle: t\nlevel: MUST\ncites: [{source: x.go}]\nsteps: [{wait: {pods: {count: 0}}}]\n"


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        (">=1.14", ["v1.14.0", "v1.15.1", "v1.16.0-alpha.1", "v1.14.0-alpha.1"], ["v1.13.3", "v1.10.2"]),
        (">=1.12, <1.14", ["v1.12.4", "v1.13.3"], ["v1.11.2", "v1.14.0", "v1.14.0-alpha.1"]),
        ("==1.13.*", ["v1.13.0", "v1.13.3"], ["v1.12.4", "v1.14.4"]),
    ],
)
def test_a_range_holds_its_releases_and_a_prerelease_counts_as_the_release_it_leads_to(text: str, inside: list[str], outside: list[str]) -> None:
    found = releases.parse(text)
    assert all(found.contains(r) for r in inside), [r for r in inside if not found.contains(r)]
    assert not any(found.contains(r) for r in outside), [r for r in outside if found.contains(r)]
    assert found.contains("dev"), "a release the kit cannot place is judged"


def test_the_loader_reads_a_range_and_refuses_what_is_not_one() -> None:
    sc = loader.load_stream(io.StringIO(HEAD + "volcano: '>=1.14'\n"), "r.yaml")
    assert sc.releases is not None and str(sc.releases) == ">=1.14"
    assert loader.load_stream(io.StringIO(HEAD), "r.yaml").releases is None
    with pytest.raises(loader.ScenarioError) as err:
        loader.load_stream(io.StringIO(HEAD + "volcano: 'newest'\n"), "r.yaml")
    assert "r.yaml:7: volcano: 'newest' is not a release range: write it as '>=1.14'" in str(err.value)


def test_a_check_names_the_releases_it_applies_to() -> None:
    text = HEAD + "expect:\n- describe: old\n  volcano: '<1.14'\n  pods: {count: 0}\n- describe: every\n  pods: {count: 0}\n"
    old, every = loader.load_stream(io.StringIO(text), "r.yaml").expect
    assert (old.applies_to("v1.13.3"), old.applies_to("v1.15.1"), old.applies_to(None)) == (True, False, True)
    assert every.releases is None and every.applies_to("v1.15.1")
    with pytest.raises(loader.ScenarioError) as err:
        loader.load_stream(io.StringIO(text.replace("'<1.14'", "'soon'")), "r.yaml")
    assert "'soon' is not a release range" in str(err.value)


@pytest.mark.cluster
def test_a_scenario_for_other_releases_is_not_applicable_and_never_counted(tmp_path: pathlib.Path) -> None:
    proc, report = suite_runs.vck_run(tmp_path, str(RELEASE_SCENARIOS))
    verdicts = suite_runs.verdicts(report)
    assert verdicts == {"releases-later-release": "not-applicable", "releases-this-range": "passed"}, suite_runs.explain(report)
    later = next(s for s in report["scenarios"] if s["id"] == "releases-later-release")
    assert later["reason"] == f"applies to Volcano >=1.99; reference is {reference.Reference().volcano_release()}" and not later["checks"]
    # Inside the scenario, the checks of a later release are left out, the others judged.
    here = next(s for s in report["scenarios"] if s["id"] == "releases-this-range")
    assert [c["description"] for c in here["checks"]] == ["the ConfigMap is there"], here["checks"]
    summary = report["summary"]
    assert (summary["not_applicable"], summary["not_claimed"], summary["must_claimed"], summary["certified"]) == (1, 0, 1, True)
    assert proc.returncode == 0 and "not applicable 1" in proc.stdout
    # Each suite's line says it too, rather than a bare "passed 1/2".
    assert "  releases             passed 1/2, not applicable 1" in proc.stdout, proc.stdout
