"""Every suite fails against a reference with the feature it tests switched off.

A broken build is `reference:broken=FEATURE`: the named scheduler plugins or actions are taken out
of every conf it is given, or the named controller feature or webhook check is switched off,
while it still claims them. Each scenario that depends on the feature must then fail, with a
reason and every failed check saying what was expected and what was observed.

The builds run in-process on one cluster per xdist worker (`broken_context`), one feature at a
time with every selection that depends on it: switching the feature restarts only the process it
concerns. The same path `vck run --impl reference:broken=...` takes through the CLI is proven by
tests/e2e/test_gang_suite.py.
"""

from __future__ import annotations

import collections

import pytest

from conformance import results
from conformance.report import score
from conformance.runner import context, scenario_run
from conformance.scenario import models
from tests import suite_runs

pytestmark = pytest.mark.cluster

# (suite, what is switched off, the scenarios that depend on it as "a or b or c" (substrings of
# their ids), how many those are: a renamed scenario cannot silently drop out)
BROKEN = [
    # the job controller, the webhook and the PodGroup controller
    ("admission", "admission", "duplicate-task-name or unknown-queue or policy-exit-code-zero or no-tasks or queue-deserved-above-capability or job-update-rules or partition-policy-rules or pods-kept-as-given", 8),
    ("admission", "defaults", "default-", 6),
    ("elastic", "admission", "scale-below-min-available", 1),
    ("queue", "admission", "hierarchy-admission or hierarchy-annotations", 2),
    ("lifecycle", "policies", "podfailed-restartjob or podevicted-abortjob or taskcompleted-completejob or exitcode-abortjob or delete-finished-jobs or unknown-abortjob", 7),
    ("lifecycle", "volumes", "job-volumes-get-their-claims", 1),
    ("retry", "ttl", "ttl-deletes", 2),
    ("retry", "policies", "max-retry", 2),
    ("dependson", "dependson", "seed003 or chain or iteration-all", 3),
    ("elastic", "elastic", "scale-down or min-available-updates or svc-hosts", 3),
    ("suspend", "commands", "abort-command or resume-command or terminate-command", 3),
    ("queue-state", "queue", "close-empty or closing-parent or closing-queue-can-be-deleted", 3),
    ("plugins", "job-plugins", "env-task-index or svc-headless or mpi-master or ray-worker-joins or ssh-env-svc-on-one-job", 5),
    ("native", "podgroup", "k8s-job or deployment or plain-pod or podgroup-carries or daemonset", 5),
    ("admission", "admission", "podgroup-queue-must-be-open or pod-job-disruption-budget", 2),
    # One CronJob scenario is proof enough: each waits for whole minutes of the schedule.
    ("cronjob", "cronjob", "schedule-and-concurrency", 1),
    ("cronjob", "admission", "cronjob-admission", 1),
    ("jobflow", "jobflow", "dag-order or retain-delete-and-failure", 2),
    ("jobflow", "admission", "jobflow-admission", 1),
    ("hypernode", "hypernode", "status-node-count", 1),
    ("hypernode", "admission", "hypernode-admission-crd", 1),
    # the scheduler's actions and plugins
    ("queue", "proportion", "weights or capability-caps-queue or guarantee or overused-queue or closed-queue", 7),
    ("predicates", "predicates", "node-selector or required-node-affinity or untolerated-taint or cordoned-node or max-pods or pod-affinity or pod-anti-affinity or host-ports or pod-topology-spread or switch-off-taint", 11),
    ("enqueue", "overcommit", "default-factor or too-big or waits-for-a-node", 3),
    ("preempt", "preempt", "by-priority or down-to-min or across-queues", 3),
    # v1.15's gang-aware eviction: each action's scenarios fail with it left out of the conf (each
    # of the others ends with a job that only the action lets run; these cover every rule kind).
    ("preempt", "gangpreempt", "gang-safe-bundle-keeps or gang-whole-bundle-breaks or gang-only-strictly or gang-role or gang-hard", 5),
    ("reclaim", "gangreclaim", "gang-safe-bundle-keeps or gang-whole-bundle-breaks or gang-not-from", 3),
    # Rules with no conf name of their own, switched off in the scheduler (--disable).
    ("preempt", "topology-aware-preemption", "topology-aware-anti-affinity", 1),
    ("preempt", "preemptable-label", "preemptable-label-false or preemptable-false-from-job", 2),
    ("scheduling-gates", "scheduling-gates", "hold-volcano-job or hold-deployment or consume-no-inqueue or preemptor-waits", 4),
    ("priority", "priority", "task-order-within-job", 1),
    ("conformance-plugin", "conformance", "critical-pods-never-victims", 1),
    ("shuffle", "shuffle", "evicts-what-no-budget-protects", 1),
    ("shuffle", "pdb", "evicts-what-no-budget-protects", 1),
    ("preempt", "pdb", "pdb-protects", 1),
    ("preempt", "gang", "not-below-min-available", 1),
    ("reclaim", "reclaim", "from-overused or weights or only-when-needed or two-queues-at-once", 4),
    ("reclaim", "capacity", "capacity-down-to-deserved or capacity-capability or capacity-only-from or capacity-hierarchy-leaf", 4),
    ("queue", "capacity", "capacity-hierarchy", 1),
    ("drf", "drf", "smaller-dominant-share or preempt-until-shares or shares-would-invert or hierarchy-shares", 4),
    ("elastic-sharing", "preempt", "inference", 1),
    ("binpack", "binpack", "fuller or weights", 2),
    ("gang", "gang", "best-effort-members-wait or no-partial-gang or three-over-asking or unschedulable-gang-reported", 4),
    # A PodGroup is Unknown only when its gang is unschedulable (gang's condition) while pods run.
    ("queue-state", "gang", "podgroup-phase-follows", 1),
    ("gang", "backfill", "best-effort-members-complete", 1),
    ("gang", "allocate", "full-occupancy or partition-policy", 2),
    ("backfill", "backfill", "pods-placed or beside-pending", 2),
    ("sla", "sla", "permits-enqueue or global or earlier-deadline or higher-priority", 4),
    ("task-topology", "task-topology", "same-node or spreads or between-kinds or task-order", 4),
    ("nodeorder", "nodeorder", "least-requested or preferred-node-affinity or most-requested or preferred-pod-affinity or prefer-no-schedule or image-locality", 6),
    ("devices", "allocate", "gpu-request-runs or exhausted-gpus or unhealthy-gpus or vendor-resource-names", 4),
    # Hard confinement lives in allocate upstream, so only the soft scenarios depend on the plugin;
    # the hard ones fail when the job controller no longer hands the Job's networkTopology on.
    ("hypernode", "network-topology-aware", "soft-keeps-pods-together or soft-prefers-the-nearer", 2),
    # From v1.14 the plugin is what confines a job's partitions (sub-jobs) and ranks their
    # HyperNodes; the controller is what hands the partitions on as the PodGroup's subGroupPolicy.
    ("hypernode", "network-topology-aware", "partition-tier1-groups or partition-job-tier2 or partition-replaced", 4),
    ("hypernode", "network-topology", "hard or partition-min-partitions-gate or partition-soft-within", 12),
    ("preempt", "network-topology", "gang-subgroup-job", 1),
    ("reclaim", "network-topology", "gang-subgroup-job", 1),
    # Of several HyperNodes that hold a hard job, the best scored (binpack's node scores) wins.
    ("hypernode", "binpack", "hard-best-scored", 1),
    ("numa", "numa-aware", "needs-one-numa-node or refuses-split-cpus or prefers-fewer-numa-nodes or must-match-the-node or follows-the-node or only-guaranteed", 6),
    ("gpu-aware", "gpu-aware", "exact-fit or fewer-fragmented or loss-weight or weight-against", 4),
    ("gpu-podaffinity", "gpu-podaffinity", "seed-example or no-supernode or atomic or invalid-group", 5),
    ("operators", "gpu-podaffinity", "units", 2),
    ("operators", "gang", "gang", 4),
    # The v1.13 plugins of issue 19 with a suite each.
    ("resource-strategy-fit", "resource-strategy-fit", "per-resource-strategy or pod-annotations-override or sra-keeps or proportional-keeps", 4),
    ("nodegroup", "nodegroup", "queue-affinity or non-strict or hierarchy-inherits", 3),
    ("cdp", "cdp", "cooldown-protects or cooldown-from-job", 2),
    ("resourcequota", "resourcequota", "enqueue-within-quota", 1),
    ("tdm", "tdm", "revocable-nodes-for-preemptable or only-non-preemptable or preemptable-job-uses", 3),
    ("deviceshare", "deviceshare", "gpu-sharing-by-memory or gpu-number-whole-cards or vgpu-hami-core", 3),
]
# The features with the most scenarios first (the longest tests first, see tests/conftest.py).
FEATURES = sorted({feature for _, feature, _, _ in BROKEN}, key=lambda f: (-sum(count for _, g, _, count in BROKEN if g == f), f))


def select(scenarios: list[models.Scenario], suite: str, selection: str) -> list[models.Scenario]:
    """The suite's scenarios whose id contains any term of "a or b or c" (as `vck run -k` picks)."""
    terms = [t.strip() for t in selection.split(" or ")]
    return [sc for sc in scenarios if sc.suite == suite and any(t in sc.id for t in terms)]


@pytest.fixture(scope="module")
def scenarios() -> list[models.Scenario]:
    found, problems = suite_runs.shipped_scenarios()
    assert not [p for p in problems if p.is_error], problems
    return list(found)


@pytest.mark.parametrize("feature", FEATURES, ids=[f"without-{f}" for f in FEATURES])
def test_suites_fail_without_their_feature(broken_context: context.RunContext, scenarios: list[models.Scenario], feature: str) -> None:
    rows = [(suite, selection, count) for suite, f, selection, count in BROKEN if f == feature]
    chosen: dict[str, list[models.Scenario]] = collections.defaultdict(list)
    for suite, selection, count in rows:
        picked = select(scenarios, suite, selection)
        assert len(picked) == count, f"{suite}: the selection {selection!r} picked {sorted(sc.id for sc in picked)}"
        chosen[f"{suite}: {selection}"] += picked
    implementation = broken_context.implementation
    implementation.broken = (feature,)  # type: ignore[attr-defined]
    # Judging stops at the first failed check: one is all the proof needs, the other windows
    # would only be waited out.
    outcome: dict[str, list[results.ScenarioResult]] = {row: [scenario_run.run(sc, broken_context, first_failure=True) for sc in picked] for row, picked in chosen.items()}
    every = [r for rs in outcome.values() for r in rs]
    failed_to_fail = {row: [(r.id, r.status.value, r.reason) for r in rs if r.status is not results.Status.FAILED] for row, rs in outcome.items()}
    assert not any(failed_to_fail.values()), f"with {feature} off these should all fail: {dict((k, v) for k, v in failed_to_fail.items() if v)}"
    # As `vck run` would report it: not certified.
    assert not score.certified(results.RunResult(_metadata(f"reference:broken={feature}"), tuple(every)))
    for result in every:
        bad = [c for c in result.checks if not c.passed]
        assert result.reason and all(c.expected and c.observed for c in bad), result


def _metadata(implementation: str) -> results.RunMetadata:
    return results.RunMetadata(run_id="broken", implementation=implementation, backend="embedded", versions={}, started_at="", wall_time_s=0.0, time_scale=float(suite_runs.BROKEN_TIME_SCALE), command="")
