"""One small run's result tree (two suites, four verdicts, a timeline) that the report tests write,
render and compare: tests/conformance/report/test_reports.py, test_diff.py, test_report_render.py."""

from __future__ import annotations

from conformance import results


def scenario(id_: str, suite: str, status: results.Status, level: results.Level = results.Level.MUST, **extra: object) -> results.ScenarioResult:
    base: dict[str, object] = dict(
        id=id_, suite=suite, title=f"title of {id_}", level=level, cites=("seed: 003_35c386466be32963.txt §3.2",),
        requires=("plugin:gang",), path=f"scenarios/{suite}/{id_}.yaml", status=status, reason=f"reason of {id_}", duration_s=1.5,
    )
    base.update(extra)
    return results.ScenarioResult(**base)  # type: ignore[arg-type]


TIMELINE = (
    results.TimelineEntry(0.1, "ADDED", "Pod", "ns", "job-w-0", {"phase": "Pending", "node": None}),
    results.TimelineEntry(0.5, "MODIFIED", "Pod", "ns", "job-w-0", {"phase": "Running", "node": "node-a"}),
    results.TimelineEntry(0.6, "MODIFIED", "Pod", "ns", "job-w-1", {"phase": "Running", "node": "node-b"}),
    results.TimelineEntry(2.0, "MODIFIED", "Pod", "ns", "job-w-0", {"phase": "Succeeded", "node": "node-a"}),
    results.TimelineEntry(2.5, "DELETED", "Pod", "ns", "job-w-1", {"phase": "Running", "node": "node-b"}),
    results.TimelineEntry(0.0, "STEP", "Step", "ns", "apply", {"action": "apply"}),
)


def run() -> results.RunResult:
    meta = results.RunMetadata("run-1", "reference", "embedded", {"kit": "0.1.0", "kubernetes": "v1.33.2"}, "2026-11-22T00:00:00+00:00", 12.5, 1.0, "vck run")
    return results.RunResult(meta, (
        scenario("gang-a", "gang", results.Status.PASSED, timeline=TIMELINE),
        scenario("gang-b", "gang", results.Status.FAILED, checks=(
            results.Check("no pod is bound", False, "never within 15s: at least 1 bound pod", "held at 0.2s: 1 matching", 0.2),
            results.Check("<script>alert(1)</script>", True, "x", "y", 0.3),
        ), timeline=TIMELINE),
        scenario("queue-a", "queue", results.Status.NOT_CLAIMED, results.Level.SHOULD, missing_capabilities=("plugin:drf",)),
        scenario("queue-b", "queue", results.Status.ERROR, figures={"fragmented nodes": 3.0}),
    ))
