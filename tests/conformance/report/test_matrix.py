"""`vck matrix`: verdicts side by side, the changes between neighbouring columns first; a real
matrix of the reference beside its broken build."""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

import pytest

from conformance import results
from conformance.report import matrix
from tests import suite_runs
from tests.conformance.report import sample_run

PASSED, FAILED = results.Status.PASSED, results.Status.FAILED


def column(label: str, *verdicts: tuple[str, results.Status]) -> matrix.Column:
    meta = dataclasses.replace(sample_run.run().metadata, implementation=label, versions={"kubernetes": f"k-{label}"})
    return matrix.Column(label, results.RunResult(meta, tuple(sample_run.scenario(id_, "gang", status) for id_, status in verdicts)))


def test_rows_put_the_changes_between_neighbours_first() -> None:
    columns = [
        column("v1", ("a", PASSED), ("b", PASSED), ("c", FAILED)),
        column("v2", ("a", PASSED), ("b", FAILED), ("c", FAILED)),
        column("v3", ("a", PASSED), ("b", FAILED)),
    ]
    rows = matrix.rows(columns)
    assert [(r.id, r.verdicts, r.changes()) for r in rows] == [
        ("b", ("passed", "failed", "failed"), [1]),
        ("c", ("failed", "failed", None), [2]),
        ("a", ("passed", "passed", "passed"), []),
    ]
    page = matrix.render(columns, rows, ["diff-v1-vs-v2.html", "diff-v2-vs-v3.html"])
    assert 'href="diff-v1-vs-v2.html#b"' in page and 'href="diff-v2-vs-v3.html#c"' in page and "k-v2" in page
    data = matrix.to_json(columns, rows)
    assert data["schema"] == "vck-matrix/v1" and data["scenarios"][0] == {"id": "b", "suite": "gang", "level": "MUST", "verdicts": ["passed", "failed", "failed"], "changes_at": [1]}


@pytest.mark.cluster
def test_a_matrix_of_the_reference_beside_its_broken_build(tmp_path: pathlib.Path) -> None:
    reports = tmp_path / "reports"
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "matrix", "reference,reference:broken=gang", "--suite", "gang", "-k", "no-partial-gang or full-occupancy",
         "--jobs", "1", "--reports", str(reports), "--matrix-id", "m"],
        cwd=suite_runs.REPO, env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")}, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    data = json.loads((reports / "m" / "matrix.json").read_text())
    assert [c["implementation"] for c in data["columns"]] == ["reference", "reference:broken=gang"]
    verdicts = {s["id"]: s["verdicts"] for s in data["scenarios"]}
    assert verdicts["gang-no-partial-gang"] == ["passed", "failed"], proc.stdout
    assert data["scenarios"][0]["id"] == "gang-no-partial-gang", "a change comes first"
    assert "gang/gang-no-partial-gang: passed -> failed" in proc.stdout
    for label in ("reference", "reference-broken-gang"):
        assert (reports / "m" / label / "report.json").is_file() and (reports / "m" / label / "junit.xml").is_file()
    pair = (reports / "m" / "diff-reference-vs-reference-broken-gang.html").read_text()
    assert 'id="gang-no-partial-gang"' in pair
    assert 'diff-reference-vs-reference-broken-gang.html#gang-no-partial-gang' in (reports / "m" / "index.html").read_text()
