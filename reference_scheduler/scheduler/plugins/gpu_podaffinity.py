"""gpu-podaffinity: place each model-parallel unit of a PyTorch job inside one supernode.

Seed 002 (section 7.2.2.2) documents a MetaX plugin for Volcano: a job annotated
`metax-tech.com/gpu-group-size: G` (on a pod template; the master's alone is enough) is cut into
units of G GPUs, and each unit must land in one supernode, a group of nodes with a high-bandwidth
interconnect, or the job is not scheduled. With `metax-tech.com/atomic-gpu-group-size: A` only
each sub-unit of A GPUs must share a supernode, and the unit prefers one. Only PyTorch jobs are
supported (PyTorchJob, a Volcano Job with the pytorch plugin, a dlrover ElasticJob). Its code is
not public; the kit's rules, stated here and in scenarios/gpu-podaffinity/README.md:

- Ranks, sizes, units: gpu_podaffinity_units.py (master first, then workers by index; runs of
  ranks adding up to A are sub-units, to G units). Supernodes: gpu_podaffinity_room.py.
- jobValid: sizes that do not fit the job (G not a multiple of a pod's GPUs, the job's GPUs not a
  multiple of G, A not dividing G, ...) make the job invalid: allocate skips it and its PodGroup
  gets `Unschedulable` with reason `InvalidGpuGroupSize` and the problem as message (written at
  session close, after gang's; gang's own message carries it too, as the job's fit error).
- batchPredicate, the hard rule, for the group a pod must share a supernode with (its unit, or
  its sub-unit with A): once a pod of the group holds a node, the others may only go to that
  node's supernode (the first such pod in rank order decides); before that, the group may only
  start in a supernode with room for all its unplaced pods, counting the unplaced pods of other
  groups already started there as taken.
- batchNodeOrder, with A only: the supernode holding most of the unit's placed pods scores
  100 x `gpu-podaffinity.weight` (default 10, so the preference outweighs nodeorder's and
  binpack's scores); when none does, a supernode with room for all of the unit's unplaced pods
  scores half that.
- taskOrder: a job's ranks in rank order, so a unit fills before the next one starts.

Arguments: `gpu-podaffinity.weight`, `gpu-podaffinity.resource` (default `metax-tech.com/gpu`),
`gpu-podaffinity.supernode-label` (default `devices.vck.io/supernode`).

Upstream: none (a vendor plugin, seed 002_61851c1e6fb0f74a.txt section 7.2.2.2); the extension
points are Volcano's (pkg/scheduler/framework/session_plugins.go).
"""

from __future__ import annotations

import collections
import datetime
import logging
from typing import Any, Iterable, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import extension_points
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.plugins import gpu_podaffinity_room as room
from reference_scheduler.scheduler.plugins import gpu_podaffinity_units as units_mod

log = logging.getLogger(__name__)
NAME = "gpu-podaffinity"
WEIGHT_ARGUMENT = "gpu-podaffinity.weight"
RESOURCE_ARGUMENT = "gpu-podaffinity.resource"
LABEL_ARGUMENT = "gpu-podaffinity.supernode-label"
DEFAULT_RESOURCE = "metax-tech.com/gpu"
DEFAULT_WEIGHT = 10
MAX_NODE_SCORE = 100
INVALID_REASON = "InvalidGpuGroupSize"
UNSCHEDULABLE = "Unschedulable"


def _weight(arguments: Mapping[str, Any]) -> int:
    try:
        return int(arguments.get(WEIGHT_ARGUMENT, DEFAULT_WEIGHT))
    except (TypeError, ValueError):
        log.warning("gpu-podaffinity: %s=%r is not an integer; using %d", WEIGHT_ARGUMENT, arguments.get(WEIGHT_ARGUMENT), DEFAULT_WEIGHT)
        return DEFAULT_WEIGHT


def _placed(task: job_info.TaskInfo) -> bool:
    return bool(task.node_name) and task.status in job_info.OCCUPYING


class GpuPodAffinity:
    NAME = NAME
    # Set when the session opens (a plugin instance lives for one session).
    ssn: Session
    supernodes: room.Supernodes

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.weight = _weight(arguments)
        self.resource = str(arguments.get(RESOURCE_ARGUMENT) or DEFAULT_RESOURCE)
        self.label = str(arguments.get(LABEL_ARGUMENT) or room.DEFAULT_LABEL)
        self.plans: dict[str, units_mod.Units] = {}
        self.invalid: dict[str, units_mod.Invalid] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.ssn = ssn
        self.plans, self.invalid = {}, {}
        for job in ssn.jobs.values():
            result = units_mod.plan(job, self.resource)
            if isinstance(result, units_mod.Invalid):
                self.invalid[job.uid] = result
                job.job_fit_error = f"{NAME}: {result.message}"
            elif result is not None:
                self.plans[job.uid] = result
        self.supernodes = room.Supernodes.build(ssn, self.label)
        ssn.add_job_valid_fn(NAME, self.valid)
        ssn.add_task_order_fn(NAME, self.task_order)
        ssn.add_batch_predicate_fn(NAME, self.predicate)
        ssn.add_batch_node_order_fn(NAME, self.score)

    def on_session_close(self, ssn: Session) -> None:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for uid, invalid in self.invalid.items():
            job = ssn.jobs.get(uid)
            if job is None or not job.tasks or job.is_ready():
                continue
            ssn.update_condition(job, {
                "type": UNSCHEDULABLE, "status": "True", "lastTransitionTime": now, "transitionID": ssn.uid,
                "reason": INVALID_REASON, "message": f"{NAME}: {invalid.message}",
            })
        self.plans, self.invalid = {}, {}

    # --- extension points ----------------------------------------------------------------------
    def valid(self, job: job_info.JobInfo) -> tuple[str, str] | None:
        invalid = self.invalid.get(job.uid)
        return None if invalid is None else (INVALID_REASON, f"{NAME}: {invalid.message}")

    def task_order(self, left: job_info.TaskInfo, right: job_info.TaskInfo) -> int:
        units = self.plans.get(left.job)
        if units is None or left.job != right.job:
            return 0
        a, b = units.order.get(left.uid), units.order.get(right.uid)
        if a is None or b is None or a == b:
            return 0
        return -1 if a < b else 1

    def predicate(self, task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
        units = self.plans.get(task.job)
        if units is None or task.uid not in units.where:
            return []
        job = self.ssn.jobs[task.job]
        group = [job.tasks[uid] for uid in units.confined(task.uid)]
        pinned = self._supernode_of(group)
        if pinned is not None:
            log.debug("gpu-podaffinity: %s follows its group to supernode %s", task.name, pinned)
            return [(~self.supernodes.mask(pinned), f"node is outside supernode {pinned}, where the pod's GPU group is")]
        pending = [t for t in group if not _placed(t)]
        reserved = self._reserved(exclude={t.uid for t in group})
        reasons = np.full(len(self.ssn.matrix), None, dtype=object)
        reasons[self.supernodes.outside] = "node is in no supernode"
        for name, rows in self.supernodes.rows.items():
            if not self._room(rows, reserved.get(name, []) + pending):
                reasons[rows] = f"supernode {name} has no room for the {len(pending)} pods of the pod's GPU group"
        if log.isEnabledFor(logging.DEBUG):
            log.debug("gpu-podaffinity: %s starts its group of %d pods; refused: %s", task.name, len(pending), collections.Counter(r for r in reasons if r))
        return [(np.fromiter((r is not None for r in reasons), dtype=bool, count=len(reasons)), reasons)]

    def score(self, task: job_info.TaskInfo) -> np.ndarray:
        out = np.zeros(len(self.ssn.matrix))
        units = self.plans.get(task.job)
        if units is None or not units.atomic or task.uid not in units.where:
            return out
        job = self.ssn.jobs[task.job]
        unit = [job.tasks[uid] for uid in units.unit(task.uid)]
        preferred = self._most_of(unit)
        if preferred is not None:
            out[self.supernodes.mask(preferred)] = MAX_NODE_SCORE * self.weight
            return out
        pending = [t for t in unit if not _placed(t)]
        reserved = self._reserved(exclude={t.uid for t in unit})
        for name, rows in self.supernodes.rows.items():
            if self._room(rows, reserved.get(name, []) + pending):
                out[rows] = MAX_NODE_SCORE * self.weight / 2
        return out

    # --- helpers -----------------------------------------------------------------------------------
    def _supernode_of(self, group: Iterable[job_info.TaskInfo]) -> str | None:
        """The supernode of the group's first placed pod in rank order (None: none placed yet)."""
        for task in group:
            if _placed(task) and task.node_name in self.supernodes.of_node:
                return self.supernodes.of_node[task.node_name]
        return None

    def _most_of(self, unit: list[job_info.TaskInfo]) -> str | None:
        """The supernode holding most of the unit's placed pods; among equals the earlier rank's."""
        counts = collections.Counter(self.supernodes.of_node.get(t.node_name) for t in unit if _placed(t))
        counts.pop(None, None)
        if not counts:
            return None
        best = max(counts.values())
        return next(name for name in (self.supernodes.of_node.get(t.node_name) for t in unit if _placed(t)) if counts.get(name) == best)

    def _reserved(self, exclude: set[str]) -> dict[str, list[job_info.TaskInfo]]:
        """Per supernode, the unplaced pods of groups that have started there (they may only go
        there), leaving out the tasks in `exclude`."""
        out: dict[str, list[job_info.TaskInfo]] = {}
        for uid, units in self.plans.items():
            job = self.ssn.jobs.get(uid)
            if job is None:
                continue
            for unit in units.units:
                for group in (unit if units.atomic else [tuple(t for sub in unit for t in sub)]):
                    tasks = [job.tasks[t] for t in group if t in job.tasks]
                    pinned = self._supernode_of(tasks)
                    if pinned is None:
                        continue
                    waiting = [t for t in tasks if t.status is job_info.TaskStatus.PENDING and t.uid not in exclude]
                    out.setdefault(pinned, []).extend(waiting)
        return out

    def _room(self, rows: np.ndarray, tasks: list[job_info.TaskInfo]) -> bool:
        return room.has_room(self.ssn.matrix, rows, [self.ssn.request(t) for t in tasks], self.resource)
