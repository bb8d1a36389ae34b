"""The main job end to end: `vck run` with its defaults (every suite, the reference, the embedded
cluster, parallel workers) is CERTIFIED with every scenario passed, and writes its three reports.

This one run proves what the per-suite "passes on the reference" tests proved before (the gang
suite; the job-controller suites, at least 80 scenarios; the scheduler suites): each now reads it.
"""

from __future__ import annotations

import pytest

from conformance import parallel
from conformance.scenario import loader
from tests import full_run, suite_runs

pytestmark = pytest.mark.cluster

CONTROLLER_SUITES = ("admission", "lifecycle", "retry", "dependson", "elastic", "suspend", "queue-state", "plugins", "native")
SCHEDULER_SUITES = (
    "gang", "queue", "predicates", "enqueue", "preempt", "reclaim", "elastic-sharing", "binpack", "nodeorder", "backfill",
    "sla", "task-topology", "drf", "devices", "hypernode", "gpu-aware", "numa", "gpu-podaffinity", "operators",
)


def test_every_suite_passes_on_the_reference(reference_run: full_run.FullRun) -> None:
    run = reference_run
    assert run.report is not None, f"no report written (exit {run.returncode})\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"
    statuses = suite_runs.verdicts(run.report)
    assert set(statuses.values()) == {"passed"}, suite_runs.explain(run.report)
    assert run.returncode == 0 and "CERTIFIED" in run.stdout and "NOT CERTIFIED" not in run.stdout
    assert run.report["summary"]["certified"] is True
    # Every scenario of the tree ran: none was dropped on the way.
    scenarios, problems = loader.load_tree([suite_runs.REPO / "scenarios"])
    assert not [p for p in problems if p.is_error]
    assert sorted(statuses) == sorted(sc.id for sc in scenarios)
    # Every suite is there, the job-controller ones with at least the 80 scenarios issue 4 asks for.
    suites = {s["suite"] for s in run.report["scenarios"]}
    assert set(CONTROLLER_SUITES) | set(SCHEDULER_SUITES) <= suites, sorted(suites)
    controller = [s for s in run.report["scenarios"] if s["suite"] in CONTROLLER_SUITES]
    assert len(controller) >= 80, f"issue 4 asks for at least 80 job-controller scenarios, found {len(controller)}"


def test_the_run_writes_three_reports_and_points_latest_at_them(reference_run: full_run.FullRun) -> None:
    folder = reference_run.reports / "run"
    assert (folder / "report.json").exists() and (folder / "junit.xml").exists() and (folder / "index.html").exists()
    assert (reference_run.reports / "latest").resolve() == folder.resolve()


def test_the_run_is_parallel_by_default(reference_run: full_run.FullRun) -> None:
    """`--jobs auto` is the default: the run used as many workers as the rule gives this machine
    (two per core as memory allows; at least two wherever 3 GiB are free)."""
    assert reference_run.report is not None
    memory = parallel.available_memory_mib()
    if memory is not None and memory < 3 * 1024:
        pytest.skip(f"only {memory} MiB free: auto may rightly choose one worker")
    assert reference_run.report["run"]["workers"] >= 2, reference_run.report["run"]
