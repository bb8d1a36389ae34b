"""Sub-jobs (v1.14): the groups a PodGroup's `spec.subGroupPolicy` cuts its pods into, such as
the partitions of a Volcano Job's task. Each sub-job has its own gang size and network topology;
a policy's `minSubGroups` says how many of its sub-jobs must be ready before the job may start.

A pod belongs to the first policy whose labelSelector matches it and for which it has a value for
every matchLabelKeys key; its sub-job is the policy's name and those values. Pods that match no
policy form the job's default sub-job: it needs one ready pod when the PodGroup has policies and
the job's minAvailable when it has none, and it has the job's topology.

The kit rebuilds the sub-jobs from the tasks whenever it asks (they are a handful of pods), so
the statuses a trial placement sets are always what they see; the HyperNode a sub-job's placed
pods sit under is derived from their nodes each time, as upstream recovers it after a restart.

Upstream: pkg/scheduler/api/sub_job_info.go, job_info.go (getSubJobMatchValues,
CheckSubJobValid, CheckSubJobReady), pkg/scheduler/plugins/gang/gang.go.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Iterable, Mapping

from reference_scheduler.scheduler.api import hyper_node_info, job_info

SUBJOB_READY = job_info.READY


@dataclasses.dataclass(frozen=True)
class SubGroupPolicy:
    name: str
    size: int
    min_groups: int
    match_labels: Mapping[str, str]
    match_label_keys: tuple[str, ...]
    topology: hyper_node_info.NetworkTopology | None

    def values_of(self, task: job_info.TaskInfo) -> tuple[str, ...] | None:
        """The pod's values for the policy's keys, None when it is not the policy's."""
        labels = task.pod["metadata"].get("labels") or {}
        if any(labels.get(key) != value for key, value in self.match_labels.items()):
            return None
        values = tuple(str(labels.get(key) or "") for key in self.match_label_keys)
        return values if all(values) else None


@dataclasses.dataclass
class SubJob:
    id: str
    group: str  # the policy's name; '' for the default sub-job
    min_available: int
    topology: hyper_node_info.NetworkTopology | None
    match_index: int
    tasks: list[job_info.TaskInfo] = dataclasses.field(default_factory=list)

    def ready_num(self) -> int:
        return sum(1 for t in self.tasks if t.status in SUBJOB_READY)

    def is_ready(self) -> bool:
        best_effort = sum(1 for t in self.tasks if t.status is job_info.TaskStatus.PENDING and t.best_effort)
        return self.ready_num() + best_effort >= self.min_available

    def pending(self) -> list[job_info.TaskInfo]:
        """What allocate may place: pending, not best-effort (backfill's), not gated."""
        return [t for t in self.tasks if t.status is job_info.TaskStatus.PENDING and not t.best_effort and not t.sch_gated]


def _int(raw: object, default: int) -> int:
    try:
        return int(raw) if raw is not None else default  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return default


def policies(job: job_info.JobInfo) -> list[SubGroupPolicy]:
    """The PodGroup's subGroupPolicy, in order."""
    out: list[SubGroupPolicy] = []
    for raw in (job.podgroup.get("spec") or {}).get("subGroupPolicy") or []:
        if not isinstance(raw, Mapping) or not raw.get("name"):
            continue
        selector = raw.get("labelSelector") or {}
        out.append(SubGroupPolicy(
            name=str(raw["name"]),
            size=max(_int(raw.get("subGroupSize"), 1), 1),
            min_groups=max(_int(raw.get("minSubGroups"), 0), 0),
            match_labels={str(k): str(v) for k, v in (selector.get("matchLabels") or {}).items()},
            match_label_keys=tuple(str(k) for k in raw.get("matchLabelKeys") or []),
            topology=hyper_node_info.topology_of(raw.get("networkTopology"), f"PodGroup {job.uid} subGroupPolicy {raw['name']}"),
        ))
    return out


def has_policies(job: job_info.JobInfo) -> bool:
    return bool((job.podgroup.get("spec") or {}).get("subGroupPolicy"))


def sub_jobs(job: job_info.JobInfo) -> dict[str, SubJob]:
    """The job's sub-jobs by id, each with its tasks."""
    rules = policies(job)
    default = SubJob(job.uid, "", 1 if rules else job.min_available, hyper_node_info.network_topology(job), 0)
    found: dict[str, SubJob] = {}
    for task in sorted(job.tasks.values(), key=lambda t: t.name):
        for rule in rules:
            values = rule.values_of(task)
            if values is None:
                continue
            sub_id = f"{job.uid}/{rule.name}/{'-'.join(values)}"
            if sub_id not in found:
                found[sub_id] = SubJob(sub_id, rule.name, rule.size, rule.topology, _int(values[0], 0))
            found[sub_id].tasks.append(task)
            break
        else:
            default.tasks.append(task)
    if default.tasks:
        found[default.id] = default
    return found


def min_sub_groups(job: job_info.JobInfo) -> dict[str, int]:
    return {rule.name: rule.min_groups for rule in policies(job) if rule.min_groups > 0}


def per_group(subs: Iterable[SubJob], ready_only: bool = False) -> Counter[str]:
    """How many sub-jobs (or ready sub-jobs) each policy has."""
    return Counter(sub.group for sub in subs if not ready_only or sub.is_ready())


def check_valid(job: job_info.JobInfo) -> bool:
    """Each policy with a minSubGroups has at least that many sub-jobs. Upstream:
    JobInfo.CheckSubJobValid."""
    needed = min_sub_groups(job)
    counts = per_group(sub_jobs(job).values()) if needed else Counter()
    return all(counts[group] >= n for group, n in needed.items())


def check_ready(job: job_info.JobInfo) -> bool:
    """Each policy with a minSubGroups has at least that many ready sub-jobs. Upstream:
    JobInfo.CheckSubJobReady."""
    needed = min_sub_groups(job)
    ready = per_group(sub_jobs(job).values(), ready_only=True) if needed else Counter()
    return all(ready[group] >= n for group, n in needed.items())


def worksheet(job: job_info.JobInfo) -> list[SubJob]:
    """The sub-jobs allocate works through, in order: those not ready yet, those still needed for
    their policy's minSubGroups first, then by their index (the partition number) and id.
    Upstream: organizeJobWorksheet and the gang plugin's sub-job order."""
    every = list(sub_jobs(job).values())
    subs = sorted((s for s in every if not s.is_ready() and s.pending()), key=lambda s: (s.match_index, s.id))
    ready_counts = per_group(every, ready_only=True)
    needed = min_sub_groups(job)
    required: list[SubJob] = []
    rest: list[SubJob] = []
    for sub in subs:
        if ready_counts[sub.group] < needed.get(sub.group, 0):
            required.append(sub)
            ready_counts[sub.group] += 1
        else:
            rest.append(sub)
    return required + rest


def describe(job: job_info.JobInfo) -> dict[str, Any]:
    """For logs: each sub-job's ready count and size."""
    return {sub.id: f"{sub.ready_num()}/{sub.min_available}" for sub in sub_jobs(job).values()}
