"""The buckets task-topology sorts a job's tasks into: groups meant to share a node.

Each kind (task name) named in an affinity or anti-affinity group gets a strength: its own pods
apart (self anti-affinity) 4, together with other kinds (affinity between kinds) 3, its own pods
together 2, apart from other kinds 1; a kind's strength is the highest of its wishes. The task
order annotation ranks kinds above that.

Building the buckets, tasks already on a node come first (one bucket per node), then the unplaced
ones: by the task order, then by strength, then by pod name. Each unplaced task joins the bucket
it likes best (+1 per pod of an affine kind in it, -1 per pod of an anti-affine kind); a tie goes
to the bucket asking for fewer resources, and a task that likes no bucket at all (best sum below
zero) opens a new one. Tasks of kinds without a wish stay outside every bucket.

Upstream: pkg/scheduler/plugins/task-topology/manager.go (JobManager), bucket.go (Bucket),
util.go (TaskOrder); the kit's own structure.
"""

from __future__ import annotations

import collections
import dataclasses

from reference_scheduler.api import resource
from reference_scheduler.scheduler.api import job_info

SELF_ANTI_AFFINITY = 4
INTER_AFFINITY = 3
SELF_AFFINITY = 2
INTER_ANTI_AFFINITY = 1
MIB = 1024.0 * 1024.0


@dataclasses.dataclass(frozen=True)
class Topology:
    """A job's wishes, as its annotations give them: groups of task names, and an order."""

    affinity: list[list[str]]
    anti_affinity: list[list[str]]
    order: list[str]


def request_weight(request: resource.Resource) -> float:
    """How big a request is, to even out buckets: 1 millicore, 1 MiB and 1/1000 of any other
    resource count the same (upstream's reqScore, whose scalar resources are in milli-units)."""
    total = 0.0
    for name in request.names():
        value = request.get(name)
        if name == "cpu":
            total += value
        elif name == "memory":
            total += value / MIB
        else:
            total += value * 1000.0
    return total


@dataclasses.dataclass
class Bucket:
    index: int
    pending: dict[str, job_info.TaskInfo] = dataclasses.field(default_factory=dict)
    kinds: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    request: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    weight: float = 0.0
    placed: int = 0
    on_node: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)

    def add(self, kind: str, task: job_info.TaskInfo) -> None:
        self.kinds[kind] += 1
        if task.node_name:
            self.on_node[task.node_name] += 1
            self.placed += 1
            return
        self.pending[task.uid] = task
        self.request.add(task.resreq)
        self.weight += request_weight(task.resreq)

    def task_placed(self, task: job_info.TaskInfo) -> None:
        self.on_node[task.node_name] += 1
        self.placed += 1
        if self.pending.pop(task.uid, None) is not None:
            self.request.sub(task.resreq)
            self.weight -= request_weight(task.resreq)


@dataclasses.dataclass
class JobBuckets:
    together: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    apart: dict[str, set[str]] = dataclasses.field(default_factory=dict)
    strength: dict[str, int] = dataclasses.field(default_factory=dict)
    rank: dict[str, int] = dataclasses.field(default_factory=dict)
    buckets: list[Bucket] = dataclasses.field(default_factory=list)
    bucket_of_task: dict[str, int] = dataclasses.field(default_factory=dict)
    # The most tasks any bucket held when built: scores are scaled by it.
    largest: int = 0
    # Per node, the kinds of this job's pods placed there during the session.
    kinds_on_node: dict[str, collections.Counter[str]] = dataclasses.field(default_factory=dict)

    @classmethod
    def build(cls, topology: Topology, tasks: list[job_info.TaskInfo]) -> JobBuckets:
        job = cls()
        job._wishes(topology.affinity, job.together, SELF_AFFINITY, INTER_AFFINITY)
        job._wishes(topology.anti_affinity, job.apart, SELF_ANTI_AFFINITY, INTER_ANTI_AFFINITY)
        for i, kind in enumerate(topology.order):
            job.rank[kind] = len(topology.order) - i
        members = [t for t in tasks if t.role and t.role in job.strength]
        placed = sorted((t for t in members if t.node_name), key=lambda t: t.node_name)
        unplaced = sorted((t for t in members if not t.node_name), key=lambda t: (-job.rank.get(t.role, 0), -job.strength[t.role], t.name))
        by_node: dict[str, Bucket] = {}
        for task in placed:
            bucket = by_node.get(task.node_name)
            if bucket is None:
                bucket = by_node[task.node_name] = job._new_bucket()
            job._add(bucket, task)
        for task in unplaced:
            job._add(job._choose(task.role), task)
        return job

    def _wishes(self, groups: list[list[str]], pairs: dict[str, set[str]], alone: int, between: int) -> None:
        for group in groups:
            if len(group) == 1:
                pairs.setdefault(group[0], set()).add(group[0])
                self._mark(group[0], alone)
                continue
            names = [name for name in group if name]
            for name in names:
                pairs.setdefault(name, set()).update(other for other in names if other != name)
                self._mark(name, between)

    def _mark(self, kind: str, strength: int) -> None:
        self.strength[kind] = max(self.strength.get(kind, 0), strength)

    def _new_bucket(self) -> Bucket:
        bucket = Bucket(index=len(self.buckets))
        self.buckets.append(bucket)
        return bucket

    def _add(self, bucket: Bucket, task: job_info.TaskInfo) -> None:
        self.bucket_of_task[task.uid] = bucket.index
        bucket.add(task.role, task)
        self.largest = max(self.largest, len(bucket.pending) + bucket.placed)

    def _choose(self, kind: str) -> Bucket:
        best: Bucket | None = None
        best_liking = 0
        for bucket in self.buckets:
            liking = self.liking(kind, bucket.kinds, anti_only=False)
            if best is None or liking > best_liking or (liking == best_liking and bucket.weight < best.weight):
                best, best_liking = bucket, liking
        if best is None or best_liking < 0:
            return self._new_bucket()
        return best

    def liking(self, kind: str, kinds: collections.Counter[str] | dict[str, int], anti_only: bool) -> int:
        """+1 per pod of an affine kind (unless anti_only), -1 per pod of an anti-affine kind."""
        total = 0
        for other, count in kinds.items():
            if not anti_only and other in self.together.get(kind, ()):
                total += count
            if other in self.apart.get(kind, ()):
                total -= count
        return total

    def anti_affinity_on(self, kind: str, node: str) -> int:
        """Minus the pods of kinds anti-affine to `kind` placed on the node this session."""
        kinds = self.kinds_on_node.get(node)
        return self.liking(kind, kinds, anti_only=True) if kinds and kind else 0

    def bucket_of(self, task: job_info.TaskInfo) -> Bucket | None:
        index = self.bucket_of_task.get(task.uid)
        return None if index is None else self.buckets[index]

    def compare_kinds(self, left: str, right: str) -> int:
        """Positive when `left` should go first: higher in the task order, else a stronger wish."""
        if left == right:
            return 0
        for table in (self.rank, self.strength):
            lv, rv = table.get(left, 0), table.get(right, 0)
            if lv != rv:
                return 1 if lv > rv else -1
        return 0

    def placed(self, task: job_info.TaskInfo) -> None:
        if task.role:
            self.kinds_on_node.setdefault(task.node_name, collections.Counter())[task.role] += 1
        bucket = self.bucket_of(task)
        if bucket is not None:
            bucket.task_placed(task)
