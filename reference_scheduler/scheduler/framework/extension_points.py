"""The session's extension points: what a plugin's function for each point takes and gives (one
alias per point), and the part of the session that holds them: one table per point, plugin name
to function, filled through one call per point. A reader finds every plugin that votes on
reclaim by searching for `add_reclaimable_fn`, and mypy checks each plugin's function against its
point's signature. How a point's results combine is its dispatcher's to say (session_plugins.py).

Upstream: pkg/scheduler/api/types.go (the function types), the tables of Session
(pkg/scheduler/framework/session.go) and the Add...Fn calls of session_plugins.go.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from reference_scheduler.scheduler.api import job_info, queue_info, sub_job_info

# A plugin's say in a vote: interface.PERMIT, ABSTAIN or REJECT.
Vote = int

# Orders: negative puts `left` first, positive `right`, 0 leaves it to the next plugin.
JobOrderFn = Callable[[job_info.JobInfo, job_info.JobInfo], int]
QueueOrderFn = Callable[[queue_info.QueueInfo, queue_info.QueueInfo], int]
TaskOrderFn = Callable[[job_info.TaskInfo, job_info.TaskInfo], int]
# (left, right, the evictor's queue): whose victims go first when two victims' queues differ.
VictimQueueOrderFn = Callable[[queue_info.QueueInfo, queue_info.QueueInfo, queue_info.QueueInfo], int]

# (reason, message) when the plugin finds the job invalid, None when it is valid.
JobValidFn = Callable[[job_info.JobInfo], tuple[str, str] | None]
JobReadyFn = Callable[[job_info.JobInfo], bool]
JobPipelinedFn = Callable[[job_info.JobInfo], Vote]
JobEnqueueableFn = Callable[[job_info.JobInfo], Vote]
# Told that the enqueue action let a job in, so the plugin counts what it holds from then on.
JobEnqueuedFn = Callable[[job_info.JobInfo], None]
JobStarvingFn = Callable[[job_info.JobInfo], bool]

# May the queue take the task (allocate), has it too much (reclaim's victims' queues are not),
# may it reclaim to place these tasks (preemptive: one task for reclaim, a job's pending tasks
# together for gangreclaim)?
AllocatableFn = Callable[[queue_info.QueueInfo, job_info.TaskInfo], bool]
OverusedFn = Callable[[queue_info.QueueInfo], bool]
PreemptiveFn = Callable[[queue_info.QueueInfo, list[job_info.TaskInfo]], bool]

# (evictor, candidates) -> (the candidates the plugin would let go, its vote): ABSTAIN leaves the
# choice to the others whatever the list. Preemptable and reclaimable take the same form.
EvictableFn = Callable[[job_info.TaskInfo, list[job_info.TaskInfo]], tuple[list[job_info.TaskInfo], Vote]]


@dataclasses.dataclass(frozen=True)
class EvictionContext:
    """Who asks gangpreempt or gangreclaim for victims, and where. Upstream: api.EvictionContext."""

    kind: str  # gangpreempt | gangreclaim
    job: job_info.JobInfo
    # The HyperNode whose nodes the victims are taken from; "" for the whole cluster.
    domain: str


# (context, candidates in eviction order) -> (the candidates the plugin lets go, its vote): one
# call for all of a domain's candidates, so a plugin may judge them together and in order.
UnifiedEvictableFn = Callable[[EvictionContext, list[job_info.TaskInfo]], tuple[list[job_info.TaskInfo], Vote]]
# Running tasks -> those the plugin would have the shuffle action evict.
VictimTasksFn = Callable[[list[job_info.TaskInfo]], Iterable[job_info.TaskInfo]]

# One predicate's verdict on every node of the session (matrix rows): which nodes fail and why (one
# reason for all, or one per node, None where it passed); a third element True says evicting pods
# could mend the failure (kube-scheduler's Unschedulable rather than UnschedulableAndUnresolvable).
PredicateCheck = tuple[np.ndarray, str | np.ndarray] | tuple[np.ndarray, str | np.ndarray, bool]
BatchPredicateFn = Callable[[job_info.TaskInfo], Sequence[PredicateCheck]]
# A score per node of the session, in matrix row order.
BatchNodeOrderFn = Callable[[job_info.TaskInfo], npt.ArrayLike]
# (job, each candidate HyperNode's nodes) -> a score per HyperNode (one left out scores 0).
HyperNodeOrderFn = Callable[[job_info.JobInfo, dict[str, list[str]]], Mapping[str, float]]
# (a sub-job, its candidate HyperNodes -> their nodes) -> each candidate's score. From v1.14 the
# plugin that ranks a sub-job's HyperNodes (network-topology-aware) is also what confines jobs with
# sub-jobs to HyperNodes: without one, allocate places them over every node. Upstream:
# HyperNodeOrderFn with a SubJobInfo, HyperNodeGradientForJobFn, HyperNodeGradientForSubJobFn.
SubJobHyperNodeOrderFn = Callable[[sub_job_info.SubJob, Mapping[str, frozenset[str]]], Mapping[str, float]]


class ExtensionPoints:
    """The session's tables, one per extension point: plugin name -> its function. Plugins fill
    them in `on_session_open`; the dispatchers read them in the conf's tier order."""

    def __init__(self) -> None:
        self.job_order_fns: dict[str, JobOrderFn] = {}
        self.queue_order_fns: dict[str, QueueOrderFn] = {}
        self.victim_queue_order_fns: dict[str, VictimQueueOrderFn] = {}
        self.task_order_fns: dict[str, TaskOrderFn] = {}
        self.job_valid_fns: dict[str, JobValidFn] = {}
        self.job_ready_fns: dict[str, JobReadyFn] = {}
        self.job_pipelined_fns: dict[str, JobPipelinedFn] = {}
        self.job_enqueueable_fns: dict[str, JobEnqueueableFn] = {}
        self.job_enqueued_fns: dict[str, JobEnqueuedFn] = {}
        self.job_starving_fns: dict[str, JobStarvingFn] = {}
        self.allocatable_fns: dict[str, AllocatableFn] = {}
        self.overused_fns: dict[str, OverusedFn] = {}
        self.preemptive_fns: dict[str, PreemptiveFn] = {}
        self.preemptable_fns: dict[str, EvictableFn] = {}
        self.reclaimable_fns: dict[str, EvictableFn] = {}
        self.unified_evictable_fns: dict[str, UnifiedEvictableFn] = {}
        self.victim_tasks_fns: dict[str, VictimTasksFn] = {}
        self.batch_predicate_fns: dict[str, BatchPredicateFn] = {}
        self.batch_node_order_fns: dict[str, BatchNodeOrderFn] = {}
        self.hyper_node_order_fns: dict[str, HyperNodeOrderFn] = {}
        self.sub_job_hyper_node_order_fns: dict[str, SubJobHyperNodeOrderFn] = {}

    def add_job_order_fn(self, name: str, fn: JobOrderFn) -> None:
        self.job_order_fns[name] = fn

    def add_queue_order_fn(self, name: str, fn: QueueOrderFn) -> None:
        self.queue_order_fns[name] = fn

    def add_victim_queue_order_fn(self, name: str, fn: VictimQueueOrderFn) -> None:
        self.victim_queue_order_fns[name] = fn

    def add_task_order_fn(self, name: str, fn: TaskOrderFn) -> None:
        self.task_order_fns[name] = fn

    def add_job_valid_fn(self, name: str, fn: JobValidFn) -> None:
        self.job_valid_fns[name] = fn

    def add_job_ready_fn(self, name: str, fn: JobReadyFn) -> None:
        self.job_ready_fns[name] = fn

    def add_job_pipelined_fn(self, name: str, fn: JobPipelinedFn) -> None:
        self.job_pipelined_fns[name] = fn

    def add_job_enqueueable_fn(self, name: str, fn: JobEnqueueableFn) -> None:
        self.job_enqueueable_fns[name] = fn

    def add_job_enqueued_fn(self, name: str, fn: JobEnqueuedFn) -> None:
        self.job_enqueued_fns[name] = fn

    def add_job_starving_fn(self, name: str, fn: JobStarvingFn) -> None:
        self.job_starving_fns[name] = fn

    def add_allocatable_fn(self, name: str, fn: AllocatableFn) -> None:
        self.allocatable_fns[name] = fn

    def add_overused_fn(self, name: str, fn: OverusedFn) -> None:
        self.overused_fns[name] = fn

    def add_preemptive_fn(self, name: str, fn: PreemptiveFn) -> None:
        self.preemptive_fns[name] = fn

    def add_preemptable_fn(self, name: str, fn: EvictableFn) -> None:
        self.preemptable_fns[name] = fn

    def add_reclaimable_fn(self, name: str, fn: EvictableFn) -> None:
        self.reclaimable_fns[name] = fn

    def add_unified_evictable_fn(self, name: str, fn: UnifiedEvictableFn) -> None:
        self.unified_evictable_fns[name] = fn

    def add_victim_tasks_fn(self, name: str, fn: VictimTasksFn) -> None:
        self.victim_tasks_fns[name] = fn

    def add_batch_predicate_fn(self, name: str, fn: BatchPredicateFn) -> None:
        self.batch_predicate_fns[name] = fn

    def add_batch_node_order_fn(self, name: str, fn: BatchNodeOrderFn) -> None:
        self.batch_node_order_fns[name] = fn

    def add_hyper_node_order_fn(self, name: str, fn: HyperNodeOrderFn) -> None:
        self.hyper_node_order_fns[name] = fn

    def add_sub_job_hyper_node_order_fn(self, name: str, fn: SubJobHyperNodeOrderFn) -> None:
        self.sub_job_hyper_node_order_fns[name] = fn
