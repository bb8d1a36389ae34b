"""The main job end to end: `vck run` with its defaults (every suite, the reference, the embedded
cluster, parallel workers) is CERTIFIED with every scenario passed, and writes its three reports.

This one run proves what the per-suite "passes on the reference" tests proved before (the gang
suite; the job-controller suites, at least 80 scenarios; the scheduler suites): each now reads it.
"""

from __future__ import annotations

import pytest

from conformance import parallel
from tests import full_run, suite_runs

pytestmark = pytest.mark.cluster

CONTROLLER_SUITES = ("admission", "lifecycle", "retry", "dependson", "elastic", "suspend", "queue-state", "plugins", "native")
SCHEDULER_SUITES = (
    "gang", "queue", "predicates", "enqueue", "preempt", "reclaim", "elastic-sharing", "binpack", "nodeorder", "backfill",
    "sla", "task-topology", "drf", "devices", "hypernode", "gpu-aware", "numa", "gpu-podaffinity", "operators",
)


def test_every_suite_passes_on_the_reference(reference_run: full_run.FullRun) -> None:
    """One test, so that no other worker ever waits on the shared run's lock while it runs."""
    run = reference_run
    assert run.report is not None, f"no report written (exit {run.returncode})\nstdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"
    statuses = suite_runs.verdicts(run.report)
    assert not suite_runs.unexpected_verdicts(run.report), suite_runs.explain(run.report)
    # The reference models the latest release: the scenarios of earlier ones only are not applicable.
    assert {i for i, s in statuses.items() if s == "not-applicable"} == suite_runs.elsewhere(run.report) != set()
    assert run.returncode == 0 and "CERTIFIED" in run.stdout and "NOT CERTIFIED" not in run.stdout
    assert run.report["summary"]["certified"] is True and run.report["summary"]["not_run"] == 0
    # Every scenario of the tree ran: none was dropped on the way.
    scenarios, problems = suite_runs.shipped_scenarios()
    assert not [p for p in problems if p.is_error]
    assert sorted(statuses) == sorted(sc.id for sc in scenarios)
    assert run.report["run"]["selected"] == len(scenarios)
    # Every suite is there, the job-controller ones with at least the 80 scenarios issue 4 asks for.
    suites = {s["suite"] for s in run.report["scenarios"]}
    assert set(CONTROLLER_SUITES) | set(SCHEDULER_SUITES) <= suites, sorted(suites)
    controller = [s for s in run.report["scenarios"] if s["suite"] in CONTROLLER_SUITES]
    assert len(controller) >= 80, f"issue 4 asks for at least 80 job-controller scenarios, found {len(controller)}"
    # The three reports, and `latest` pointing at them.
    folder = run.reports / "run"
    assert (folder / "report.json").exists() and (folder / "junit.xml").exists() and (folder / "index.html").exists()
    assert (run.reports / "latest").resolve() == folder.resolve()
    # The implementation's logs are kept in the report folder, one folder per worker.
    assert sorted(p.name for p in (folder / "logs").glob("*/*.log")) and all(
        {"reference-scheduler.log", "reference-controller.log", "reference-webhook.log"} <= {p.name for p in d.iterdir()} for d in (folder / "logs").iterdir()
    ), sorted(str(p) for p in (folder / "logs").rglob("*"))
    assert '<a href="logs/">' in (folder / "index.html").read_text(), "the HTML report links the logs"
    # `--jobs auto` is the default: the run used as many workers as the rule gives this machine
    # (two and a half per core as memory allows; at least two wherever 3 GiB are free).
    memory = parallel.available_memory_mib()
    if memory is None or memory >= 3 * 1024:
        assert run.report["run"]["workers"] >= 2, run.report["run"]
