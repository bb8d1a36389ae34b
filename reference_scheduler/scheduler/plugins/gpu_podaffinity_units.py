"""How gpu-podaffinity reads a job: which pods are PyTorch ranks, in what order, the group sizes
the job asks for, and the model-parallel units and sub-units those sizes cut the ranks into.

Seed 002 (section 7.2.2.2) states the contract; the vendor's code is not public, so what follows
is the kit's reading of it, each choice named:

- A pod is a rank of a PyTorch job when one of the three job kinds the seed lists made it:
  a Kubeflow PyTorchJob (label `training.kubeflow.org/operator-name: pytorchjob-controller`;
  the `master` replica first, then `worker`s by `training.kubeflow.org/replica-index`), a dlrover
  ElasticJob (label `elasticjob.dlrover/name`, replica type `worker`, in the order of
  `elasticjob.dlrover/rank-index`), or a Volcano Job with the pytorch job plugin (label
  `volcano.sh/job-name` and a container carrying the plugin's `MASTER_ADDR` and `RANK`: master 0,
  worker i at i+1, which is the master first and then the workers by `volcano.sh/task-index`).
  Other pods of such a job (no GPU, other roles) belong to no unit and are left alone. A job
  with no rank at all is not a PyTorch job: the plugin does not work on it, as the seed says.
- The sizes are read from the annotations of any of the job's pods (the seed's examples put
  them on the master's template only) or of its PodGroup; different values are an error.
- `metax-tech.com/gpu-group-size` G must be a positive integer, a multiple of every rank's GPUs,
  and divide the job's total GPUs; `metax-tech.com/atomic-gpu-group-size` A (default G) must be a
  positive integer, a multiple of every rank's GPUs, and divide G.
- Walking the ranks in order, each run of ranks whose GPUs add up to A is a sub-unit, each run
  adding up to G is a unit (units are whole sub-units). The MetaX fork of dlrover groups its node
  ranks the same way: rank r is in group r // (G / GPUs per pod).

Upstream: none (a vendor plugin, seed 002_61851c1e6fb0f74a.txt section 7.2.2.2).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info

log = logging.getLogger(__name__)
GROUP_SIZE = "metax-tech.com/gpu-group-size"
ATOMIC_GROUP_SIZE = "metax-tech.com/atomic-gpu-group-size"
KUBEFLOW_OPERATOR = "training.kubeflow.org/operator-name"
KUBEFLOW_PYTORCH = "pytorchjob-controller"
KUBEFLOW_TYPE = "training.kubeflow.org/replica-type"
KUBEFLOW_INDEX = "training.kubeflow.org/replica-index"
DLROVER_JOB = "elasticjob.dlrover/name"
DLROVER_TYPE = "elasticjob.dlrover/replica-type"
DLROVER_RANK = "elasticjob.dlrover/rank-index"
DLROVER_INDEX = "elasticjob.dlrover/replica-index"
VOLCANO_JOB = "volcano.sh/job-name"
# A rank that is being replaced or has ended gives way to a live pod of the same rank.
_LIVE = (job_info.OCCUPYING - {job_info.TaskStatus.RELEASING}) | {job_info.TaskStatus.PENDING}


def _int(value: Any) -> int | None:
    text = str(value).strip()
    return int(text) if text.isdigit() else None


def _kubeflow_rank(labels: Mapping[str, str]) -> tuple[int, int] | None:
    kind = str(labels.get(KUBEFLOW_TYPE, "")).lower()
    index = _int(labels.get(KUBEFLOW_INDEX, ""))
    if index is None or kind not in ("master", "worker"):
        return None
    return (0 if kind == "master" else 1, index)


def _dlrover_rank(labels: Mapping[str, str]) -> tuple[int, int] | None:
    if labels.get(DLROVER_TYPE) != "worker":
        return None
    index = _int(labels.get(DLROVER_RANK, labels.get(DLROVER_INDEX, "")))
    return None if index is None else (0, index)


def _volcano_rank(pod: Mapping[str, Any]) -> tuple[int, int] | None:
    for container in (pod.get("spec") or {}).get("containers") or []:
        env = {e.get("name"): e.get("value") for e in container.get("env") or [] if isinstance(e, Mapping)}
        if "MASTER_ADDR" in env and _int(env.get("RANK", "")) is not None:
            return (0, int(str(env["RANK"]).strip()))
    return None


def rank_of(pod: Mapping[str, Any]) -> tuple[int, int] | None:
    """Where the pod stands among its job's PyTorch ranks (smaller first); None: not a rank."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    if labels.get(KUBEFLOW_OPERATOR) == KUBEFLOW_PYTORCH:
        return _kubeflow_rank(labels)
    if DLROVER_JOB in labels:
        return _dlrover_rank(labels)
    if VOLCANO_JOB in labels:
        return _volcano_rank(pod)
    return None


@dataclasses.dataclass(frozen=True)
class Units:
    """A valid job's units: unit -> sub-units -> task uids, each in rank order."""

    group_size: int
    atomic_size: int
    units: tuple[tuple[tuple[str, ...], ...], ...]
    # task uid -> (unit, sub-unit) and task uid -> its place in rank order
    where: Mapping[str, tuple[int, int]]
    order: Mapping[str, int]

    @property
    def atomic(self) -> bool:
        """Only sub-units are confined; the unit as a whole is a preference."""
        return self.atomic_size < self.group_size

    def unit(self, uid: str) -> tuple[str, ...]:
        u, _ = self.where[uid]
        return tuple(t for sub in self.units[u] for t in sub)

    def confined(self, uid: str) -> tuple[str, ...]:
        """The tasks that must share a supernode with this one: its sub-unit (atomic) or unit."""
        u, s = self.where[uid]
        return self.units[u][s] if self.atomic else self.unit(uid)


@dataclasses.dataclass(frozen=True)
class Invalid:
    """Why the job's sizes cannot be honoured (shown on its PodGroup)."""

    message: str


def _sizes(job: job_info.JobInfo, key: str) -> list[str]:
    found = {str(v) for v in [((job.podgroup.get("metadata") or {}).get("annotations") or {}).get(key)] if v is not None}
    for task in job.tasks.values():
        value = (task.pod["metadata"].get("annotations") or {}).get(key)
        if value is not None:
            found.add(str(value))
    return sorted(found)


def _size(job: job_info.JobInfo, key: str) -> int | Invalid | None:
    values = _sizes(job, key)
    if not values:
        return None
    if len(values) > 1:
        return Invalid(f"the pods of the job disagree on {key}: {', '.join(values)}")
    size = _int(values[0])
    if not size:
        return Invalid(f"{key} must be a positive integer, got {values[0]!r}")
    return size


def _ranks(job: job_info.JobInfo) -> list[tuple[tuple[int, int], job_info.TaskInfo]]:
    """One task per rank, in rank order; a live pod wins over an ended or leaving one."""
    best: dict[tuple[int, int], job_info.TaskInfo] = {}
    for task in sorted(job.tasks.values(), key=lambda t: t.name):
        rank = rank_of(task.pod)
        if rank is None:
            continue
        held = best.get(rank)
        if held is None or (held.status not in _LIVE and task.status in _LIVE):
            best[rank] = task
    return sorted(best.items(), key=lambda item: item[0])


def _cut(tasks: list[tuple[str, int]], size: int) -> list[list[str]] | None:
    """Runs of tasks whose GPUs add up to `size` each; None when a run would overshoot."""
    runs: list[list[str]] = []
    current: list[str] = []
    total = 0
    for uid, gpus in tasks:
        current.append(uid)
        total += gpus
        if total > size:
            return None
        if total == size:
            runs.append(current)
            current, total = [], 0
    return runs if not current else None


def plan(job: job_info.JobInfo, resource: str) -> Units | Invalid | None:
    """The job's units, why its sizes are invalid, or None when the plugin does not apply (no
    group size, or not a PyTorch job)."""
    group = _size(job, GROUP_SIZE)
    if group is None:
        return None
    ranks = _ranks(job)
    if not ranks:
        log.debug("gpu-podaffinity: job %s asks for %s but has no PyTorch ranks: left alone", job.uid, GROUP_SIZE)
        return None
    if isinstance(group, Invalid):
        return group
    atomic = _size(job, ATOMIC_GROUP_SIZE)
    if isinstance(atomic, Invalid):
        return atomic
    atomic = atomic or group
    problems = []
    if group % atomic:
        problems.append(f"{ATOMIC_GROUP_SIZE} {atomic} does not divide {GROUP_SIZE} {group}")
    gpu_tasks = [(task.uid, task.name, round(task.resreq.get(resource))) for _, task in ranks if task.resreq.get(resource) > 0]
    if not gpu_tasks:
        return Invalid(f"{GROUP_SIZE} is {group} but no pod of the job asks for {resource}")
    # The atomic size is checked on its own only when the job gives one (it defaults to G).
    sizes = ((GROUP_SIZE, group),) if atomic == group else ((GROUP_SIZE, group), (ATOMIC_GROUP_SIZE, atomic))
    pods_by_gpus: dict[int, list[str]] = {}
    for _, name, gpus in gpu_tasks:
        pods_by_gpus.setdefault(gpus, []).append(name)
    for key, size in sizes:
        for gpus, names in sorted(pods_by_gpus.items()):
            if size % gpus:
                more = f" and {len(names) - 1} more" if len(names) > 1 else ""
                problems.append(f"{key} {size} is not a multiple of {gpus}, the {resource} of pod {names[0]}{more}")
    total = sum(gpus for _, _, gpus in gpu_tasks)
    if total % group:
        problems.append(f"the job's {total} {resource} are not a multiple of {GROUP_SIZE} {group}")
    if problems:
        return Invalid("; ".join(dict.fromkeys(problems)))
    pairs = [(uid, gpus) for uid, _, gpus in gpu_tasks]
    subs = _cut(pairs, atomic)
    if subs is None:
        return Invalid(f"the job's pods, in rank order, do not add up to runs of {atomic} {resource}")
    per_unit = group // atomic
    units = tuple(tuple(tuple(sub) for sub in subs[i:i + per_unit]) for i in range(0, len(subs), per_unit))
    where = {uid: (u, s) for u, unit in enumerate(units) for s, sub in enumerate(unit) for uid in sub}
    order = {uid: i for i, (uid, _) in enumerate(pairs)}
    return Units(group, atomic, units, where, order)
