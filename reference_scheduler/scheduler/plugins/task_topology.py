"""task-topology: keep a job's affine task kinds together and its anti-affine ones apart.

A job names its wishes in annotations (copied from the Job onto its PodGroup), by task name:
- `volcano.sh/task-topology-affinity: "ps,worker;scheduler"`: groups separated by `;`. A group of
  several kinds wants them on the same node; a group of one kind wants that kind's pods together.
- `volcano.sh/task-topology-anti-affinity: "ps;chief,evaluator"`: the same shape, for kinds that
  want to be apart (`ps` alone: ps pods apart from each other).
- `volcano.sh/task-topology-task-order: "worker,ps"`: which kind is placed first.
A name that is not a task of the job, or a name twice in one group, makes the plugin ignore the
job. Only kinds named in an affinity or anti-affinity group take part: a kind that is only in the
task order is left alone (so the order alone changes nothing).

How the wishes act (the kit's own telling of upstream's buckets; see task_topology_buckets.py):
at the start of a cycle the job's tasks are sorted into buckets, groups meant to share a node,
split wherever anti-affinity says so. Task order: tasks in a bucket before tasks outside, the
bucket with more unplaced tasks first, then the older bucket; inside a bucket by the task order,
then by how strong the kind's wish is. Node score: the bucket's tasks already on the node, plus
its unplaced tasks less those that would not fit there beside this one, minus the pods of
anti-affine kinds placed on the node earlier in the same cycle. Scores are scaled to 0..100 by
the largest bucket and multiplied by `task-topology.weight` (default 1); a node the task itself
does not fit on (counting resources being released) scores 0.

Upstream: pkg/scheduler/plugins/task-topology/topology.go, manager.go, bucket.go, util.go.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from reference_scheduler.scheduler.api import job_info, node_info
from reference_scheduler.scheduler.framework.session import EventHandler, Session
from reference_scheduler.scheduler.plugins import task_topology_buckets as buckets

log = logging.getLogger(__name__)
NAME = "task-topology"
WEIGHT_ARGUMENT = "task-topology.weight"
AFFINITY = "volcano.sh/task-topology-affinity"
ANTI_AFFINITY = "volcano.sh/task-topology-anti-affinity"
TASK_ORDER = "volcano.sh/task-topology-task-order"
MAX_NODE_SCORE = 100


def _groups(job: job_info.JobInfo, text: str) -> list[list[str]] | None:
    """`a,b;c` as [[a, b], [c]]; None when a name is not a task of the job or repeats in a group."""
    groups = [part.split(",") for part in text.split(";")]
    return groups if _known(job, groups) else None


def _known(job: job_info.JobInfo, groups: list[list[str]]) -> bool:
    kinds = {task.role for task in job.tasks.values()}
    for group in groups:
        names = [name for name in group if name]
        if any(name not in kinds for name in names) or len(set(names)) != len(names):
            log.debug("task-topology: job %s names %s, but its tasks are %s: ignored", job.uid, group, sorted(kinds))
            return False
    return True


def read_topology(job: job_info.JobInfo) -> buckets.Topology | None:
    """The job's wishes from its PodGroup's annotations; None when it has none or they are invalid."""
    annotations = (job.podgroup.get("metadata") or {}).get("annotations") or {}
    if not any(key in annotations for key in (AFFINITY, ANTI_AFFINITY, TASK_ORDER)):
        return None
    affinity = _groups(job, annotations[AFFINITY]) if AFFINITY in annotations else []
    anti_affinity = _groups(job, annotations[ANTI_AFFINITY]) if ANTI_AFFINITY in annotations else []
    order = annotations[TASK_ORDER].split(",") if TASK_ORDER in annotations else []
    if affinity is None or anti_affinity is None or not _known(job, [order]):
        return None
    return buckets.Topology(affinity, anti_affinity, order)


def _weight(arguments: Mapping[str, Any]) -> int:
    try:
        return int(arguments.get(WEIGHT_ARGUMENT, 1))
    except (TypeError, ValueError):
        log.warning("task-topology: %s=%r is not an integer; using 1", WEIGHT_ARGUMENT, arguments.get(WEIGHT_ARGUMENT))
        return 1


class TaskTopology:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.weight = _weight(arguments)
        self.jobs: dict[str, buckets.JobBuckets] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.jobs = {}
        for job in ssn.jobs.values():
            if not job.by_status(job_info.TaskStatus.PENDING):
                continue
            topology = read_topology(job)
            if topology is not None:
                self.jobs[job.uid] = buckets.JobBuckets.build(topology, list(job.tasks.values()))
        ssn.add_task_order_fn(NAME, self.task_order)
        ssn.add_batch_node_order_fn(NAME, lambda task: self.score(task, ssn.node_list()))
        ssn.event_handlers.append(EventHandler(allocate=self.placed, deallocate=lambda task: None))

    def on_session_close(self, ssn: Session) -> None:
        self.jobs = {}

    def placed(self, task: job_info.TaskInfo) -> None:
        """A task of the session was given a node (allocated or pipelined). Like upstream, a
        discarded placement is not taken back: the plugin keeps no deallocate handler."""
        job = self.jobs.get(task.job)
        if job is not None:
            job.placed(task)

    def task_order(self, left: job_info.TaskInfo, right: job_info.TaskInfo) -> int:
        """Negative: left first. Tasks in a bucket go first; across jobs nothing else is said."""
        left_job, right_job = self.jobs.get(left.job), self.jobs.get(right.job)
        if left_job is None or right_job is None:
            return 0
        lb, rb = left_job.bucket_of(left), right_job.bucket_of(right)
        if (lb is None) != (rb is None):
            return -1 if lb is not None else 1
        if left.job != right.job or lb is None or rb is None:
            return 0
        if len(lb.pending) != len(rb.pending):
            return -1 if len(lb.pending) > len(rb.pending) else 1
        if lb.index == rb.index:
            return -left_job.compare_kinds(left.role, right.role)
        return -1 if lb.index < rb.index else 1

    def score(self, task: job_info.TaskInfo, nodes: list[node_info.NodeInfo]) -> list[float]:
        """The task's score on each node, in the order given (0..100 x weight). The batch form of
        the node order: everything that does not depend on the node is looked up once."""
        job = self.jobs.get(task.job)
        bucket = job.bucket_of(task) if job is not None else None
        if job is None or bucket is None:
            return [0.0] * len(nodes)
        scale = self.weight * (MAX_NODE_SCORE / job.largest if job.largest else 1.0)
        return [float(self._bucket_score(job, bucket, task, node)) * scale for node in nodes]

    def _bucket_score(self, job: buckets.JobBuckets, bucket: buckets.Bucket, task: job_info.TaskInfo, node: node_info.NodeInfo) -> int:
        room = node.idle.clone().add(node.releasing)
        if not task.resreq.less_equal(room):
            return 0
        # Bucket members already on the node, minus the anti-affine pods placed there this session.
        score = bucket.on_node.get(node.name, 0) + min(0, job.anti_affinity_on(task.role, node.name))
        # Plus the bucket's unplaced tasks, less those that would not fit beside it.
        score += len(bucket.pending)
        if bucket.request.less_equal(room):
            return score
        rest = bucket.request.clone()
        for uid, other in bucket.pending.items():
            if uid == task.uid:
                continue
            rest.sub(other.resreq)
            score -= 1
            if rest.less_equal(room):
                break
        return score
