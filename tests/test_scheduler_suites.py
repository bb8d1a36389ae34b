"""The scheduler suites written so far (queue, predicates, enqueue) end to end: they pass on the
reference and fail when the plugin they test is taken out of the scheduler conf."""

from __future__ import annotations

import pathlib

import pytest

from tests.test_controller_suites import BROKEN_TIME_SCALE, explain, verdicts, vck_run

pytestmark = pytest.mark.cluster


def test_scheduler_suites_pass_on_the_reference(tmp_path: pathlib.Path) -> None:
    proc, report = vck_run(tmp_path, "--suite", "queue,predicates,enqueue")
    assert set(verdicts(report).values()) == {"passed"}, explain(report)
    assert proc.returncode == 0


BROKEN = [
    ("queue", "proportion", "weights or capability or guarantee", 3),
    ("predicates", "predicates", "node-selector or required-node-affinity or untolerated-taint or cordoned-node or max-pods", 5),
    ("enqueue", "overcommit", "default-factor or too-big", 2),
]


@pytest.mark.parametrize(("suite", "plugin", "selection", "count"), BROKEN, ids=[f"{s}-without-{p}" for s, p, _, _ in BROKEN])
def test_suite_fails_without_its_plugin(tmp_path: pathlib.Path, suite: str, plugin: str, selection: str, count: int) -> None:
    proc, report = vck_run(tmp_path, "--suite", suite, "-k", selection, "--impl", f"reference:broken={plugin}", "--time-scale", BROKEN_TIME_SCALE)
    statuses = verdicts(report)
    assert len(statuses) == count, f"the selection {selection!r} picked {sorted(statuses)}"
    assert set(statuses.values()) == {"failed"}, f"without {plugin} these should all fail: {statuses}"
    assert proc.returncode == 1
