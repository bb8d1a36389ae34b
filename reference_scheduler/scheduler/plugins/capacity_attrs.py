"""What the capacity plugin knows of each queue in a session (deserved, capability, guarantee,
allocated, request, inqueue, elastic), built flat or as the tree of `spec.parent`, and the
resource comparisons it makes, with Volcano's rules for a dimension a quota does not mention:
CPU and memory always count (unset is zero, or unlimited in a capability), any other resource a
quota leaves out is unlimited.

Upstream: pkg/scheduler/plugins/capacity/capacity.go (buildQueueAttrs,
buildHierarchicalQueueAttrs, checkHierarchicalQueue), pkg/scheduler/api/resource_info.go
(LessEqual with Infinity, MinDimensionResource, ExceededPart, LessPartly). The kit's own code.
"""

from __future__ import annotations

import dataclasses
import math

from reference_scheduler.api import resource
from reference_scheduler.scheduler.api import job_info, queue_info

CORE = ("cpu", "memory")
ROOT = "root"
# Volcano ignores a resource dimension below this amount (minResource).
MIN_RESOURCE = 0.1


class HierarchyError(ValueError):
    """The queue tree is not usable; the plugin then refuses everything this session."""


def with_core(res: resource.Resource) -> resource.Resource:
    for name in CORE:
        res.values.setdefault(name, 0.0)
    return res


def within(left: resource.Resource, right: resource.Resource) -> bool:
    """left <= right, a non-core resource missing from `right` being unlimited.
    Upstream: Resource.LessEqual(rr, Infinity)."""
    for name, value in left.values.items():
        if name not in CORE and name not in right.values:
            continue
        if value > right.get(name) + resource.EPSILON:
            return False
    return all(right.get(name) + resource.EPSILON >= left.get(name) for name in CORE)


def fits(used: resource.Resource, limit: resource.Resource, request: resource.Resource) -> list[str]:
    """The resources the request asks for that `used` holds more of than `limit` (missing is
    zero), empty when it fits. Upstream: LessEqualWithDimensionAndResourcesName."""
    return [name for name, value in request.values.items() if value > 0 and used.get(name) > limit.get(name) + resource.EPSILON]


def some_within(used: resource.Resource, deserved: resource.Resource, request: resource.Resource) -> bool:
    """Some resource the request asks for (and that either side has) is still within deserved.
    Upstream: LessEqualPartlyWithDimensionZeroFiltered."""
    for name, value in request.values.items():
        if value <= 0 or (used.get(name) < MIN_RESOURCE and deserved.get(name) < MIN_RESOURCE):
            continue
        if used.get(name) <= deserved.get(name) + resource.EPSILON:
            return True
    return False


def cap(res: resource.Resource, limit: resource.Resource) -> resource.Resource:
    """Each dimension of `res` lowered to `limit`'s, where `limit` has one (core ones always).
    Upstream: MinDimensionResource(limit, Infinity)."""
    for name, value in list(res.values.items()):
        if name in CORE or name in limit.values:
            res.values[name] = min(value, limit.get(name))
    return res


def exceeded(left: resource.Resource, right: resource.Resource) -> resource.Resource:
    """What `left` has beyond `right`, per dimension. Upstream: ExceededPart."""
    return with_core(resource.Resource({name: max(value - right.get(name), 0.0) for name, value in left.values.items()}))


def less_partly(left: resource.Resource, right: resource.Resource) -> bool:
    """Some dimension of `left` is below `right`'s. Upstream: LessPartly(rr, Zero)."""
    return any(left.get(name) < right.get(name) for name in set(left.names()) | set(right.names()) | set(CORE))


@dataclasses.dataclass
class QueueAttr:
    name: str
    priority: int
    deserved: resource.Resource
    guarantee: resource.Resource
    capability: resource.Resource
    real_capability: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    allocated: resource.Resource = dataclasses.field(default_factory=lambda: with_core(resource.Resource()))
    request: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    inqueue: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    elastic: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    share: float = 0.0
    ancestors: list[str] = dataclasses.field(default_factory=list)
    children: dict[str, QueueAttr] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, queue: queue_info.QueueInfo) -> QueueAttr:
        deserved = queue.deserved.clone() if queue.deserved is not None else resource.Resource()
        capability = queue.capability.clone() if queue.capability is not None else resource.Resource()
        return cls(queue.name, queue.priority, with_core(deserved), queue.guarantee.clone(), capability)

    def update_share(self) -> None:
        """The largest fraction of its deserved the queue holds. Upstream: updateQueueAttrShare."""
        self.share = max((self.allocated.get(n) / v for n, v in self.deserved.values.items() if v >= MIN_RESOURCE), default=0.0)

    @property
    def leaf(self) -> bool:
        return not self.children


def _job_usage(job: job_info.JobInfo) -> tuple[resource.Resource, resource.Resource, resource.Resource, resource.Resource]:
    """A job's (allocated, request, inqueue, elastic) as capacity counts them."""
    allocated, request, inqueue = resource.Resource(), resource.Resource(), resource.Resource()
    allocated_count = 0
    for task in job.tasks.values():
        if task.status in job_info.ALLOCATED:
            allocated.add(task.resreq)
            request.add(task.resreq)
            allocated_count += 1
        elif task.status is job_info.TaskStatus.PENDING:
            request.add(task.resreq)
    min_req = job.min_resources()
    # What a job holds enqueued leaves out its gated pods' requests (they wait for their gates).
    if job.phase == "Inqueue":
        inqueue.add(job.deduct_sch_gated(min_req))
    # A running job whose gang is placed still reserves what of its minimum it does not hold.
    if job.phase == "Running" and job.has_min_resources() and allocated_count >= job.min_available:
        inqueue.add(job.deduct_sch_gated(resource.Resource({n: max(v - allocated.get(n), 0.0) for n, v in min_req.values.items()})))
    return allocated, request, inqueue, exceeded(allocated, min_req)


def build_flat(queues: dict[str, queue_info.QueueInfo], jobs: dict[str, job_info.JobInfo], total: resource.Resource) -> dict[str, QueueAttr]:
    """One attr per queue that has jobs. A queue's real capability is the cluster less every
    queue's guarantee plus its own, capped by its capability (unset CPU or memory there means no
    cap); its deserved is spec.deserved capped by that, raised to its guarantee."""
    total_guarantee = resource.Resource()
    for each in queues.values():
        total_guarantee.add(each.guarantee)
    attrs: dict[str, QueueAttr] = {}
    for job in jobs.values():
        queue = queues.get(job.queue)
        if queue is None:
            continue
        attr = attrs.get(queue.name)
        if attr is None:
            attr = attrs[queue.name] = QueueAttr.of(queue)
            real = exceeded(total, total_guarantee).add(attr.guarantee)
            if queue.capability is not None:
                for name in CORE:
                    if attr.capability.get(name) <= 0:
                        attr.capability.values[name] = math.inf
                cap(real, attr.capability)
            attr.real_capability = real
        allocated, request, inqueue, elastic = _job_usage(job)
        attr.allocated.add(allocated)
        attr.request.add(request)
        attr.inqueue.add(inqueue)
        attr.elastic.add(elastic)
    for attr in attrs.values():
        cap(attr.deserved, attr.real_capability)
        attr.deserved.set_max(attr.guarantee)
        attr.update_share()
    return attrs


def build_tree(queues: dict[str, queue_info.QueueInfo], jobs: dict[str, job_info.JobInfo], total: resource.Resource) -> dict[str, QueueAttr]:
    """Every queue in the tree of spec.parent (no parent: under `root`), jobs only in leaves. The
    root's capability and deserved default to the cluster, its real capability is the cluster;
    children inherit unset CPU, memory and other resources of their parent's capability. Raises
    HierarchyError when the tree is inconsistent."""
    attrs: dict[str, QueueAttr] = {}

    def attach(queue: queue_info.QueueInfo) -> None:
        if queue.name == ROOT:
            return
        parent_name = queue.parent or ROOT
        parent = queues.get(parent_name)
        if parent is None:
            raise HierarchyError(f"the queue {queue.name} has invalid parent queue {parent_name}")
        if parent_name not in attrs:
            attrs[parent_name] = QueueAttr.of(parent)
            attach(parent)
        attrs[parent_name].children[queue.name] = attrs[queue.name]
        attrs[queue.name].ancestors = [*attrs[parent_name].ancestors, parent_name]

    for queue in queues.values():
        if queue.name not in attrs:
            attrs[queue.name] = QueueAttr.of(queue)
            attach(queue)
    if ROOT not in attrs:
        raise HierarchyError("there is no root queue")
    for job in jobs.values():
        attr = attrs.get(job.queue)
        if attr is None:
            continue
        if not attr.leaf:
            raise HierarchyError(f"the queue {attr.name} of job {job.namespace}/{job.name} is not a leaf queue")
        usage = _job_usage(job)
        for name in (attr.name, *attr.ancestors):
            for field, amount in zip(("allocated", "request", "inqueue", "elastic"), usage, strict=True):
                getattr(attrs[name], field).add(amount)
    root = attrs[ROOT]
    if root.capability.is_empty():
        root.capability = with_core(total.clone())
    if root.deserved.is_empty():
        root.deserved = with_core(total.clone())
    root.real_capability = with_core(total.clone())
    _check(root)
    for attr in attrs.values():
        attr.update_share()
    return attrs


def _check(attr: QueueAttr) -> None:
    """Children inherit what their capability leaves unset and may not exceed their parent's
    capability; the children's deserved and guarantee together may not exceed the parent's; each
    child's real capability is what its parent can really have, less its siblings' guarantees.
    Upstream: checkHierarchicalQueue."""
    total_guarantee, total_deserved = resource.Resource(), resource.Resource()
    for child in attr.children.values():
        total_deserved.add(child.deserved)
        total_guarantee.add(child.guarantee)
        for name, value in attr.capability.values.items():
            unset = child.capability.get(name) <= 0 if name in CORE else name not in child.capability.values
            if unset:
                child.capability.values[name] = value
        if less_partly(attr.capability, child.capability):
            raise HierarchyError(f"queue <{attr.name}> capability <{attr.capability}> is less than its child queue <{child.name}> capability <{child.capability}>")
    if attr.name == ROOT:
        if attr.guarantee.is_empty():
            attr.guarantee = total_guarantee.clone()
        if attr.deserved.is_empty():
            attr.deserved = with_core(total_deserved.clone())
    for child in attr.children.values():
        child.real_capability = cap(exceeded(attr.real_capability, total_guarantee).add(child.guarantee), child.capability)
    if less_partly(attr.deserved, total_deserved):
        raise HierarchyError(f"queue <{attr.name}> deserved resources <{attr.deserved}> are less than the sum of its child queues' deserved resources <{total_deserved}>")
    if less_partly(attr.guarantee, total_guarantee):
        raise HierarchyError(f"queue <{attr.name}> guarantee resources <{attr.guarantee}> are less than the sum of its child queues' guarantee resources <{total_guarantee}>")
    for child in attr.children.values():
        _check(child)


def queue_level(left: QueueAttr, right: QueueAttr) -> int:
    """The depth of the deepest ancestor two queues share. Upstream: getQueueLevel."""
    level = 0
    for i in range(min(len(left.ancestors), len(right.ancestors))):
        if left.ancestors[i] != right.ancestors[i]:
            break
        level = i
    return level
