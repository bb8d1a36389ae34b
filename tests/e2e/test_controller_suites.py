"""The lifecycle suite ends the same way when the job controller is killed and restarted at random
moments as in the undisturbed full run (tests/full_run.py). That the job-controller suites pass on
the reference is tests/e2e/test_reference_run.py; that each fails without its feature,
tests/e2e/test_broken_builds.py."""

from __future__ import annotations

import collections
import pathlib
from typing import Any

import pytest

from tests import full_run, suite_runs
from tests.suite_runs import (
    explain,
    replicas_by_job,
    unexpected_verdicts,
    vck_run,
    verdicts,
    worker_logs,
)

pytestmark = pytest.mark.cluster
# Evictions are edge events (a pod's deletion): one that happens while the controller is down is
# not seen, in Volcano as in the reference, so those scenarios are left out of the chaos run. So is
# every scenario with a one-pod Job whose pod fails on purpose under a PodFailed or exit-code
# policy (delete-finished-jobs, exitcode-restartjob): when that pod fails while the controller is
# down, the job's first pass after the restart (a plain sync, as Volcano's informers hand a
# restarted controller every pod as added) finds every pod finished and ends the job Failed before
# the policy can act, in Volcano as in the reference (docs/deviations.md, deviation 8's race).


def one_pod_failures() -> tuple[str, ...]:
    """The lifecycle scenarios with a one-pod Volcano Job that has a PodFailed or exit-code policy."""
    scenarios, _ = suite_runs.shipped_scenarios()
    found = []
    for sc in scenarios:
        if sc.suite != "lifecycle":
            continue
        for job in suite_runs.volcano_jobs(sc.id).values():
            spec = job["spec"]
            policies = [*(spec.get("policies") or []), *(p for t in spec["tasks"] for p in (t.get("policies") or []))]
            on_failure = any("exitCode" in p or {"PodFailed", "*"} & set([p.get("event")] + list(p.get("events") or [])) for p in policies)
            if on_failure and sum(int(t.get("replicas", 0)) for t in spec["tasks"]) == 1:
                found.append(sc.id)
                break
    return tuple(found)


CHAOS_LEFT_OUT = ("podevicted", "any-event", *one_pod_failures())
# The chaos run's point is convergence under kills, not coverage (the full run has that): one
# scenario per kind of controller work: a job to Completed, each job action a pod's failure
# triggers, a task action, a pod action, a policy timeout counted from the pod's failure, a
# PodPending timeout counted from the pod's creation, a task completion, a deletion and an Unknown
# phase.
CHAOS_PICKS = (
    "lifecycle-all-succeed-completed",
    "lifecycle-podfailed-restartjob",
    "lifecycle-podfailed-abortjob",
    "lifecycle-podfailed-terminatejob",
    "lifecycle-podfailed-restarttask",
    "lifecycle-podfailed-restartpod",
    "lifecycle-podfailed-restartpod-evicted-terminate-timeout",
    "lifecycle-podfailed-timeout-delays-action",
    "lifecycle-podpending-timeout-abortjob",
    "lifecycle-taskcompleted-completejob",
    "lifecycle-delete-running-job-removes-podgroup-and-pods",
    "lifecycle-unknown-restartjob",
)
# As `-k` picks (a substring of the id): each pick is the whole id of one scenario, or of several.
CHAOS_SELECTION = " or ".join(CHAOS_PICKS)
# A controller killed every few seconds spends much of its time starting again, on a machine
# busy with the rest of the tests: its scenarios get twice the room. A between's FROM (the
# policy timeouts) stays the implementation's own time (docs/authoring.md).
CHAOS_TIME_SCALE = "2"


def final_job_phases(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per scenario, each Job's last phase in the timeline (None once deleted)."""
    out: dict[str, dict[str, Any]] = {}
    for scenario in report["scenarios"]:
        jobs: dict[str, Any] = {}
        for entry in scenario["timeline"]:
            if entry["kind"] == "Job":
                jobs[entry["name"]] = None if entry["event"] == "DELETED" else entry["summary"].get("phase")
        out[scenario["id"]] = jobs
    return out


def most_live_pods(scenario: dict[str, Any]) -> dict[str, int]:
    """The largest number of pods of each job that existed at once."""
    live: dict[str, set[str]] = collections.defaultdict(set)
    most: dict[str, int] = collections.defaultdict(int)
    for entry in scenario["timeline"]:
        if entry["kind"] != "Pod":
            continue
        job = entry["name"].rsplit("-", 2)[0]
        if entry["event"] == "DELETED":
            live[job].discard(entry["name"])
        else:
            live[job].add(entry["name"])
        most[job] = max(most[job], len(live[job]))
    return most


def calm_run(reference_run: full_run.FullRun) -> dict[str, Any]:
    """The undisturbed run's lifecycle scenarios that the chaos run selects."""
    assert reference_run.report is not None, reference_run.stderr[-3000:]
    kept = [s for s in reference_run.report["scenarios"] if s["suite"] == "lifecycle" and any(pick in s["id"] for pick in CHAOS_PICKS)]
    return {**reference_run.report, "scenarios": kept}


def test_the_chaos_picks_are_lifecycle_scenarios_a_restart_cannot_race() -> None:
    assert not suite_runs.pick_problems({"lifecycle"}, CHAOS_PICKS, CHAOS_LEFT_OUT)


def test_lifecycle_survives_controller_restarts(tmp_path: pathlib.Path, request: pytest.FixtureRequest) -> None:
    logs = tmp_path / "chaos-logs"
    # Two workers, each with its own cluster and its own controller under chaos.
    proc, chaos = vck_run(tmp_path / "chaos", "--suite", "lifecycle", "-k", CHAOS_SELECTION, "--impl", "reference:chaos=11", "--jobs", "2", "--time-scale", CHAOS_TIME_SCALE, env={"VCK_REFERENCE_WORKDIR": str(logs)})
    kills = worker_logs(logs, "controller.log").count("chaos: killed")
    assert kills >= 5, f"the controller was killed only {kills} times"
    assert not unexpected_verdicts(chaos), explain(chaos)
    assert proc.returncode == 0
    # Asked for only now: the chaos run does not wait for the shared full run another worker
    # may be doing.
    calm = calm_run(request.getfixturevalue("reference_run"))
    assert sorted(verdicts(calm)) == sorted(verdicts(chaos)), "the chaos run and the undisturbed run judged different scenarios"
    # Every job ends in the phase the undisturbed run ended in.
    calm_phases, chaos_phases = final_job_phases(calm), final_job_phases(chaos)
    differing = {k: (calm_phases[k], chaos_phases.get(k)) for k in calm_phases if calm_phases[k] != chaos_phases.get(k)}
    assert not differing, f"final phases differ from the undisturbed run: {differing}"
    # A restart never duplicates a pod: no job ever had more pods at once than its replicas.
    for scenario in chaos["scenarios"]:
        replicas = replicas_by_job(scenario["id"])
        for job, most in most_live_pods(scenario).items():
            if job in replicas:
                assert most <= replicas[job], f"{scenario['id']}: job {job} had {most} pods at once, replicas {replicas[job]}"
