"""gangpreempt's and gangreclaim's unit of eviction: a victim job's tasks in one domain, split into
at most two bundles. The **safe** bundle holds the tasks the job can lose and stay at its
minAvailable (and each role at its own minimum, and each sub-group policy at its minSubGroups
whole sub-jobs: a task of a sub-job already broken costs nothing more, the first task of a whole
one costs the policy one ready sub-job); the **whole** bundle holds the rest, and evicting it
breaks the gang. Safe bundles are taken before whole ones; among whole ones, the bundle that frees
the most of what the preemptor needs for the least of its job's size first.

Upstream: pkg/scheduler/actions/utils/bundle.go (CreateJobBundles, ApplyAllowedTasks and the
bundles' order), v1.15.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable, Iterable

from reference_scheduler.api import resource
from reference_scheduler.scheduler.api import job_info, sub_job_info


@dataclasses.dataclass
class Bundle:
    job: job_info.JobInfo
    safe: bool
    tasks: list[job_info.TaskInfo]
    # What evicting the whole job would free (empty for a safe bundle: nothing beyond its tasks).
    whole_job: resource.Resource = dataclasses.field(default_factory=resource.Resource)

    @property
    def freed(self) -> resource.Resource:
        return job_info.total_request(self.tasks)

    def return_on(self, need: resource.Resource) -> float:
        """What the bundle frees of each resource the preemptor needs (capped at the need), over
        the share of the whole job that goes with it; a safe bundle costs no gang: infinite."""
        wanted = [name for name in need.names() if need.get(name) > 0]
        if self.safe or not wanted:
            return math.inf
        freed = self.freed
        gain = sum(min(freed.get(name), need.get(name)) / need.get(name) for name in wanted)
        cost = sum(self.whole_job.get(name) / need.get(name) for name in wanted)
        return math.inf if cost <= 0 else gain / cost


def job_bundles(job: job_info.JobInfo, local: list[job_info.TaskInfo]) -> list[Bundle]:
    """Split the job's candidate tasks of one domain into its safe and whole bundles."""
    tasks = sorted(local, key=lambda t: (t.priority, t.uid))
    surplus = job.ready_task_num() - job.min_available
    if surplus < 0:
        # Already broken: nothing more is lost by taking any of it.
        return [Bundle(job, True, tasks)]
    role_surplus: dict[str, int] = {}
    if job.min_available >= job.task_min_available_total():
        ready: dict[str, int] = {}
        for task in job.tasks.values():
            if task.status in job_info.READY or (task.status is job_info.TaskStatus.PENDING and task.best_effort):
                ready[task.role] = ready.get(task.role, 0) + 1
        role_surplus = {role: ready.get(role, 0) - need for role, need in job.min_task_member.items()}
    # Sub-group policies with a minSubGroups (partitions, v1.14): how many ready sub-jobs each can
    # spare, and the sub-jobs already missing a pod (losing another costs nothing more).
    needed = sub_job_info.min_sub_groups(job)
    subs = list(sub_job_info.sub_jobs(job).values()) if needed else []
    sub_of = {t.uid: each for each in subs for t in each.tasks}
    broken = {each.id for each in subs if not each.is_ready()}
    ready = sub_job_info.per_group(subs, ready_only=True)
    group_surplus = {group: ready[group] - n for group, n in needed.items()}
    safe: list[job_info.TaskInfo] = []
    whole: list[job_info.TaskInfo] = []
    for task in tasks:
        role_safe = role_surplus.get(task.role, 1) > 0
        sub = sub_of.get(task.uid)
        sub_safe = sub is None or sub.id in broken or group_surplus.get(sub.group, 1) > 0
        if surplus > 0 and role_safe and sub_safe:
            safe.append(task)
            surplus -= 1
            if task.role in role_surplus:
                role_surplus[task.role] -= 1
            if sub is not None and sub.id not in broken:
                broken.add(sub.id)
                if sub.group in group_surplus:
                    group_surplus[sub.group] -= 1
        else:
            whole.append(task)
    bundles = [Bundle(job, True, safe)] if safe else []
    if whole:
        bundles.append(Bundle(job, False, whole, job_info.total_request(job.tasks.values())))
    return bundles


def allowed_only(bundles: Iterable[Bundle], allowed: set[str]) -> list[Bundle]:
    """The bundles as the plugins allow them: a whole bundle stays only if every task of it may
    go; a safe bundle keeps the tasks that may."""
    kept = []
    for bundle in bundles:
        if bundle.safe:
            tasks = [t for t in bundle.tasks if t.uid in allowed]
            if tasks:
                kept.append(dataclasses.replace(bundle, tasks=tasks))
        elif all(t.uid in allowed for t in bundle.tasks):
            kept.append(bundle)
    return kept


# Whose victims go first between two bundles of different jobs (gangpreempt: the victim jobs;
# gangreclaim: their queues); negative puts the left one first, 0 leaves it to the next key.
Precedence = Callable[[Bundle, Bundle], int]


def in_order(bundles: list[Bundle], need: resource.Resource, precedence: Precedence) -> list[Bundle]:
    """Safe before whole; then the action's precedence; then the higher return on the need; then
    by victim job uid, first task uid and size, so the order never depends on a map's."""

    def compare(left: Bundle, right: Bundle) -> int:
        if left.safe != right.safe:
            return -1 if left.safe else 1
        by_precedence = precedence(left, right)
        if by_precedence:
            return by_precedence
        lr, rr = left.return_on(need), right.return_on(need)
        if lr != rr:
            return -1 if lr > rr else 1
        lk = (left.job.uid, left.tasks[0].uid if left.tasks else "", len(left.tasks))
        rk = (right.job.uid, right.tasks[0].uid if right.tasks else "", len(right.tasks))
        return (lk > rk) - (lk < rk)

    return sorted(bundles, key=functools.cmp_to_key(compare))
