"""The scheduler suites written so far (queue, predicates, enqueue, preempt, reclaim,
elastic-sharing, binpack, backfill, sla, task-topology, drf, devices, gpu-aware; gang has its own test) end to end:
they pass on the reference, fail when the action or plugin they test is taken out of the scheduler
conf, and converge when the scheduler is killed in the middle of binding a gang."""

from __future__ import annotations

import collections
import pathlib
from typing import Any

import pytest

from tests.suite_runs import assert_broken_build_fails, explain, replicas_by_job, vck_run, verdicts, volcano_jobs

pytestmark = pytest.mark.cluster
SUITES = "queue,predicates,enqueue,preempt,reclaim,elastic-sharing,binpack,nodeorder,backfill,sla,task-topology,drf,devices,hypernode,gpu-aware,numa,gpu-podaffinity,operators"


def test_scheduler_suites_pass_on_the_reference(tmp_path: pathlib.Path) -> None:
    proc, report = vck_run(tmp_path, "--suite", SUITES, "--jobs", "2")
    assert set(verdicts(report).values()) == {"passed"}, explain(report)
    assert proc.returncode == 0


BROKEN = [
    ("queue", "proportion", "weights or capability-caps-queue or guarantee or overused-queue or closed-queue", 5),
    ("predicates", "predicates", "node-selector or required-node-affinity or untolerated-taint or cordoned-node or max-pods or pod-affinity or pod-anti-affinity or host-ports", 8),
    ("enqueue", "overcommit", "default-factor or too-big", 2),
    ("preempt", "preempt", "by-priority or down-to-min or across-queues", 3),
    ("preempt", "gang", "not-below-min-available", 1),
    ("reclaim", "reclaim", "from-overused or weights", 2),
    ("reclaim", "capacity", "capacity-down-to-deserved or capacity-capability or capacity-only-from", 3),
    ("queue", "capacity", "capacity-hierarchy", 1),
    ("drf", "drf", "smaller-dominant-share or preempt-until-shares or shares-would-invert or hierarchy-shares", 4),
    ("elastic-sharing", "preempt", "inference", 1),
    ("binpack", "binpack", "fuller or weights", 2),
    ("gang", "gang", "best-effort-members-wait", 1),
    ("gang", "backfill", "best-effort-members-complete", 1),
    ("gang", "allocate", "full-occupancy", 1),
    ("backfill", "backfill", "pods-placed or beside-pending", 2),
    ("sla", "sla", "permits-enqueue or global or earlier-deadline or higher-priority", 4),
    ("task-topology", "task-topology", "same-node or spreads or between-kinds or task-order", 4),
    ("nodeorder", "nodeorder", "least-requested or preferred-node-affinity", 2),
    ("devices", "allocate", "gpu-request-runs or exhausted-gpus or unhealthy-gpus or vendor-resource-names", 4),
    # Hard confinement lives in allocate upstream, so only the soft scenarios depend on the plugin;
    # the hard ones fail when the job controller no longer hands the Job's networkTopology on.
    ("hypernode", "network-topology-aware", "soft-keeps-pods-together or soft-prefers-the-nearer", 2),
    ("hypernode", "network-topology", "hard", 5),
    ("numa", "numa-aware", "needs-one-numa-node or refuses-split-cpus or prefers-fewer-numa-nodes or must-match-the-node or follows-the-node or only-guaranteed", 6),
    ("gpu-aware", "gpu-aware", "exact-fit or fewer-fragmented or loss-weight or weight-against", 4),
    ("gpu-podaffinity", "gpu-podaffinity", "seed-example or no-supernode or atomic or invalid-group", 5),
    ("operators", "gpu-podaffinity", "units", 2),
    ("operators", "gang", "gang", 4),
]


@pytest.mark.parametrize(("suite", "plugin", "selection", "count"), BROKEN, ids=[f"{s}-without-{p}" for s, p, _, _ in BROKEN])
def test_suite_fails_without_its_plugin(tmp_path: pathlib.Path, suite: str, plugin: str, selection: str, count: int) -> None:
    assert_broken_build_fails(tmp_path, suite, plugin, selection, count)


def min_available_by_job(scenario_id: str) -> dict[str, int]:
    replicas = replicas_by_job(scenario_id)
    return {name: int(job["spec"].get("minAvailable", replicas[name])) for name, job in volcano_jobs(scenario_id).items()}


def final_bound_pods(scenario: dict[str, Any]) -> dict[str, int]:
    """Per job, how many of its pods were bound to a node when the scenario ended."""
    last: dict[str, dict[str, Any] | None] = {}
    for entry in scenario["timeline"]:
        if entry["kind"] == "Pod":
            last[entry["name"]] = None if entry["event"] == "DELETED" else entry["summary"]
    bound: dict[str, int] = collections.Counter()
    for name, summary in last.items():
        if summary is not None and summary.get("node"):
            bound[name.rsplit("-", 2)[0]] += 1
    return bound


def test_gangs_converge_when_the_scheduler_is_killed_mid_gang(tmp_path: pathlib.Path) -> None:
    logs = tmp_path / "logs"
    proc, report = vck_run(tmp_path, "--suite", "gang,preempt,reclaim", "--impl", "reference:scheduler-chaos=5", env={"VCK_REFERENCE_WORKDIR": str(logs)})
    log = (logs / "scheduler.log").read_text()
    mid_gang = log.count("its output matched --kill-on")
    assert mid_gang >= 3, f"the scheduler was killed mid-gang only {mid_gang} times ({log.count('chaos: killed')} kills in all)"
    assert set(verdicts(report).values()) == {"passed"}, explain(report)
    assert proc.returncode == 0
    # A gang is never left partly bound: each job ends with none of its pods bound or at least
    # minAvailable of them.
    for scenario in report["scenarios"]:
        bound = final_bound_pods(scenario)
        for job, minimum in min_available_by_job(scenario["id"]).items():
            assert bound.get(job, 0) == 0 or bound[job] >= minimum, f"{scenario['id']}: job {job} ends with {bound[job]} pods bound, minAvailable {minimum}"
