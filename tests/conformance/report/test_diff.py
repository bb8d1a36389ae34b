"""`vck diff`: the scenarios whose verdicts differ between two runs, as a table and a page."""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess
import sys

from conformance import results
from conformance.report import diff, json_report, writer
from tests.conformance.report.sample_run import TIMELINE, run
from tests.suite_runs import REPO


def other_run() -> results.RunResult:
    """The same scenarios as sample_run.run(), judged differently by another implementation."""
    base = run()
    changed = []
    for sc in base.scenarios:
        if sc.id == "gang-a":
            sc = dataclasses.replace(sc, status=results.Status.FAILED, reason="1 of 1 checks failed; first: no pod is bound: expected never; observed 4 bound", timeline=TIMELINE)
        elif sc.id == "queue-b":
            sc = dataclasses.replace(sc, status=results.Status.ERROR)  # same verdict: not a difference
        changed.append(sc)
    only_here = dataclasses.replace(base.scenarios[0], id="ray-custom-command", suite="plugins", status=results.Status.FAILED, reason="the head ran ray start, not the command")
    meta = dataclasses.replace(base.metadata, run_id="run-2", implementation="volcano:v1.13.3")
    return results.RunResult(meta, (*changed, only_here))


def test_differences_lists_changed_and_one_sided_scenarios_only() -> None:
    found = diff.differences(run(), other_run())
    assert [(d.id, diff.Difference.verdict(d.a), diff.Difference.verdict(d.b)) for d in found] == [
        ("gang-a", "passed", "failed"),
        ("ray-custom-command", "absent", "failed"),
    ]
    table = diff.text_table(run(), other_run(), found)
    assert table.splitlines()[0] == "2 of 5 scenarios differ: A = reference (run-1), B = volcano:v1.13.3 (run-2)"
    assert "gang-a" in table and "observed 4 bound" in table and "the head ran ray start" in table
    assert diff.differences(run(), run()) == []


def test_page_shows_both_sides_with_their_timelines() -> None:
    page = diff.render(run(), other_run(), diff.differences(run(), other_run()))
    assert page.count('class="side"') == 4 and "not in this run" in page
    assert page.count("<svg") >= 2, "each side of gang-a draws its pods on nodes"
    assert "<script" not in page and "volcano:v1.13.3" in page


def test_cli_finds_runs_by_id_and_exits_1_on_differences(tmp_path: pathlib.Path) -> None:
    writer.write_all(run(), tmp_path)
    writer.write_all(other_run(), tmp_path)
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "diff", "run-1", "run-2", "--reports", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "2 of 5 scenarios differ" in proc.stdout
    page = tmp_path / "diff-run-1-vs-run-2.html"
    assert page.is_file() and "gang-a" in page.read_text()
    same = subprocess.run([sys.executable, "-m", "conformance.cli", "diff", str(tmp_path / "run-1"), str(tmp_path / "run-1" / "report.json"), "--out", str(tmp_path / "same.html")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert same.returncode == 0 and "0 of 4 scenarios differ" in same.stdout
    missing = subprocess.run([sys.executable, "-m", "conformance.cli", "diff", "nope", "run-1", "--reports", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "no run 'nope'" in missing.stderr
    assert json_report.read(tmp_path / "run-2" / "report.json").metadata.implementation == "volcano:v1.13.3"
