"""Jobs (one per PodGroup) and their tasks (one per pod), with Volcano's task statuses.

Upstream: pkg/scheduler/api/job_info.go, helpers.go (status sets, readiness counts).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Any, Iterable

from reference_scheduler.api import resource
from reference_scheduler.scheduler import features as features_mod

GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_KEY = "volcano.sh/task-spec"
PREEMPTABLE_KEY = "volcano.sh/preemptable"
# A task's own priority, over its pod's spec.priority. Upstream: TaskPriorityAnnotation.
TASK_PRIORITY_KEY = "volcano.sh/task-priority"


class TaskStatus(str, enum.Enum):
    PENDING = "Pending"
    ALLOCATED = "Allocated"
    PIPELINED = "Pipelined"
    BINDING = "Binding"
    BOUND = "Bound"
    RUNNING = "Running"
    RELEASING = "Releasing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


ALLOCATED = {TaskStatus.BOUND, TaskStatus.BINDING, TaskStatus.RUNNING, TaskStatus.ALLOCATED}
SCHEDULED = {TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.FAILED, TaskStatus.SUCCEEDED}
COMPLETED = {TaskStatus.SUCCEEDED, TaskStatus.FAILED}
READY = {TaskStatus.BOUND, TaskStatus.BINDING, TaskStatus.RUNNING, TaskStatus.ALLOCATED, TaskStatus.SUCCEEDED}
# Statuses whose resources a node is holding.
# Statuses a victim may be taken from. Upstream: PreemptableStatus.
PREEMPTABLE = {TaskStatus.BOUND, TaskStatus.RUNNING}
OCCUPYING = {TaskStatus.ALLOCATED, TaskStatus.BINDING, TaskStatus.BOUND, TaskStatus.RUNNING, TaskStatus.RELEASING, TaskStatus.PIPELINED}


def total_request(tasks: Iterable[TaskInfo]) -> resource.Resource:
    """What the tasks ask for together."""
    total = resource.Resource()
    for task in tasks:
        total.add(task.resreq)
    return total


def status_of(pod: dict[str, Any]) -> TaskStatus:
    """Upstream: getTaskStatus in pkg/scheduler/api/helpers.go."""
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    bound = bool((pod.get("spec") or {}).get("nodeName"))
    deleting = bool(pod["metadata"].get("deletionTimestamp"))
    if phase == "Running":
        return TaskStatus.RELEASING if deleting else TaskStatus.RUNNING
    if phase == "Pending":
        if deleting:
            return TaskStatus.RELEASING
        return TaskStatus.BOUND if bound else TaskStatus.PENDING
    if phase == "Succeeded":
        return TaskStatus.SUCCEEDED
    if phase == "Failed":
        return TaskStatus.FAILED
    return TaskStatus.UNKNOWN


@dataclasses.dataclass
class TaskInfo:
    uid: str
    name: str
    namespace: str
    job: str
    role: str
    resreq: resource.Resource
    status: TaskStatus
    node_name: str
    priority: int
    pod: dict[str, Any]
    # May be evicted by preempt or reclaim (annotation, else label `volcano.sh/preemptable`;
    # true when absent). Upstream: GetPodPreemptable.
    preemptable: bool = True
    # The HyperNode the job's tasks placed so far sit under, handed to the node scorers while
    # allocate places this task (network-topology-aware reads it). Upstream: TaskInfo.JobAllocatedHyperNode.
    job_allocated_hypernode: str = ""
    # The pod still has spec.schedulingGates: no action places it and its request is not counted
    # as enqueued. Fixed for the cycle. Upstream: TaskInfo.SchGated (calSchedulingGated).
    sch_gated: bool = False
    # Annotations a plugin chose for the pod while placing it (deviceshare's card ids), written
    # onto the pod before it is bound. Upstream: the devices' Allocate patches the pod then.
    bind_annotations: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def preempts_never(self) -> bool:
        return (self.pod.get("spec") or {}).get("preemptionPolicy") == "Never"

    @functools.cached_property
    def best_effort(self) -> bool:
        # Asked for often and fixed for the pod's life (requests cannot change on a created pod).
        return self.resreq.is_empty()

    @classmethod
    def from_pod(cls, pod: dict[str, Any], job: str, features: features_mod.Features = features_mod.FULL) -> TaskInfo:
        meta = pod["metadata"]
        annotations = meta.get("annotations") or {}
        spec = pod.get("spec") or {}
        return cls(
            uid=meta.get("uid") or f"{meta.get('namespace')}/{meta['name']}",
            name=meta["name"],
            namespace=meta.get("namespace", ""),
            job=job,
            role=annotations.get(TASK_SPEC_KEY) or (meta.get("labels") or {}).get(TASK_SPEC_KEY, ""),
            resreq=resource.Resource.of_pod(pod),
            status=status_of(pod),
            node_name=spec.get("nodeName") or "",
            priority=_task_priority(spec, annotations),
            pod=pod,
            preemptable=_preemptable(meta) if features.preemptable_label else True,
            sch_gated=bool(spec.get("schedulingGates")) and features.scheduling_gates,
        )


def _task_priority(spec: dict[str, Any], annotations: dict[str, Any]) -> int:
    """The pod's priority (1 when the API server gave none), unless the task-priority annotation
    holds a whole number. Upstream: NewTaskInfo."""
    value = str(annotations.get(TASK_PRIORITY_KEY, "")).strip()
    if value.lstrip("-").isdigit():
        return int(value)
    priority = spec.get("priority")
    return int(priority) if priority is not None else 1


def _preemptable(meta: dict[str, Any]) -> bool:
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        if PREEMPTABLE_KEY in source:
            return str(source[PREEMPTABLE_KEY]).lower() in ("true", "1", "t")
    return True


@dataclasses.dataclass
class JobInfo:
    uid: str  # namespace/podgroup-name
    name: str
    namespace: str
    queue: str
    min_available: int
    min_task_member: dict[str, int]
    podgroup: dict[str, Any]
    priority: int = 0
    creation: str = ""
    tasks: dict[str, TaskInfo] = dataclasses.field(default_factory=dict)
    # Why tasks could not be placed this cycle: task uid -> reasons by node.
    fit_errors: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    job_fit_error: str = ""

    @property
    def phase(self) -> str:
        return (self.podgroup.get("status") or {}).get("phase") or ""

    @phase.setter
    def phase(self, value: str) -> None:
        self.podgroup.setdefault("status", {})["phase"] = value

    def by_status(self, *statuses: TaskStatus) -> list[TaskInfo]:
        wanted = set(statuses)
        return [t for t in self.tasks.values() if t.status in wanted]

    def count(self, statuses: set[TaskStatus]) -> int:
        return sum(1 for t in self.tasks.values() if t.status in statuses)

    def ready_task_num(self) -> int:
        return self.count(READY)

    def waiting_task_num(self) -> int:
        return self.count({TaskStatus.PIPELINED})

    def pending_best_effort_num(self) -> int:
        return sum(1 for t in self.tasks.values() if t.status is TaskStatus.PENDING and t.best_effort)

    def is_ready(self) -> bool:
        return self.ready_task_num() + self.pending_best_effort_num() >= self.min_available

    def is_pipelined(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_num() >= self.min_available

    def is_starving(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() < self.min_available

    def is_pending(self) -> bool:
        return self.phase in ("", "Pending")

    def valid_task_num(self) -> int:
        valid = ALLOCATED | {TaskStatus.SUCCEEDED, TaskStatus.PIPELINED, TaskStatus.PENDING}
        return self.count(valid)

    def task_min_available_total(self) -> int:
        return sum(self.min_task_member.values())

    def check_task_valid(self) -> bool:
        """Each task role has at least its minTaskMember pods that can still run.

        Upstream: JobInfo.CheckTaskValid."""
        if self.min_available < self.task_min_available_total():
            return True
        actual: dict[str, int] = {}
        valid = ALLOCATED | {TaskStatus.SUCCEEDED, TaskStatus.PIPELINED, TaskStatus.PENDING}
        for task in self.tasks.values():
            if task.status in valid:
                actual[task.role] = actual.get(task.role, 0) + 1
        return all(actual.get(role, 0) >= need for role, need in self.min_task_member.items())

    def min_resources(self) -> resource.Resource:
        return resource.Resource.from_list((self.podgroup.get("spec") or {}).get("minResources"))

    def deduct_sch_gated(self, amount: resource.Resource) -> resource.Resource:
        """`amount` (what the job holds enqueued) less what its gated tasks request, never below
        zero, only for the resources `amount` names: a gated job keeps no room from other jobs
        while it waits. Upstream: JobInfo.DeductSchGatedResources."""
        gated = resource.Resource()
        for task in self.tasks.values():
            if task.sch_gated:
                gated.add(task.resreq)
        if gated.is_empty():
            return amount
        return resource.Resource({name: max(value - gated.get(name), 0.0) for name, value in amount.values.items()})

    def has_min_resources(self) -> bool:
        return bool((self.podgroup.get("spec") or {}).get("minResources"))

    def fit_error(self) -> str:
        """Upstream: JobInfo.FitError: a histogram of task statuses, then why pending tasks wait."""
        histogram: dict[str, int] = {}
        for task in self.tasks.values():
            histogram[task.status.value] = histogram.get(task.status.value, 0) + 1
        histogram["minAvailable"] = self.min_available
        text = "pod group is not ready, " + ", ".join(sorted(f"{v} {k}" for k, v in histogram.items()))
        reasons: dict[str, int] = {}
        for task in self.by_status(TaskStatus.PENDING):
            reason = "Unschedulable" if task.uid in self.fit_errors else "Schedulable"
            reasons[reason] = reasons.get(reason, 0) + 1
        if reasons:
            text += "; Pending: " + ", ".join(sorted(f"{v} {k}" for k, v in reasons.items()))
        if self.job_fit_error:
            text += ". Origin reason is: " + self.job_fit_error
        else:
            for task in sorted(self.tasks.values(), key=lambda t: t.name):
                errors = self.fit_errors.get(task.uid)
                if errors:
                    text += f". Origin reason is {task.name}: {summarize_fit_errors(errors)}"
                    break
        return text


def summarize_fit_errors(errors: dict[str, str]) -> str:
    """`0/4 nodes are unavailable: 4 Insufficient cpu.`, in the form kube-scheduler made familiar."""
    counts: dict[str, int] = {}
    for reason in errors.values():
        counts[reason] = counts.get(reason, 0) + 1
    parts = ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))
    return f"0/{len(errors)} nodes are unavailable: {parts}."
