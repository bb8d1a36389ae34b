"""proportion: each queue's deserved share of the cluster by weight, capped by its request and
capability and raised to its guarantee; a queue allocates only within its deserved share, and
enqueues only within its real capability.

Upstream: pkg/scheduler/plugins/proportion/proportion.go.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from reference_scheduler.api import resource
from reference_scheduler.scheduler.api import job_info, queue_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import EventHandler, Session

NAME = "proportion"
MAX_ROUNDS = 64


@dataclasses.dataclass
class QueueAttr:
    name: str
    weight: int
    request: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    allocated: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    inqueue: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    deserved: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    guarantee: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    capability: resource.Resource | None = None
    real_capability: resource.Resource = dataclasses.field(default_factory=resource.Resource)

    def share(self) -> float:
        shares = [self.allocated.get(k) / v for k, v in self.deserved.values.items() if v > resource.EPSILON]
        return max(shares, default=0.0)


def _min(a: resource.Resource, b: resource.Resource) -> resource.Resource:
    return resource.Resource({k: min(v, b.get(k)) for k, v in a.values.items()})


class Proportion:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments
        self.attrs: dict[str, QueueAttr] = {}

    def _build(self, ssn: Session) -> None:
        total_guarantee = resource.Resource()
        for each in ssn.queues.values():
            total_guarantee.add(each.guarantee)
        for job in ssn.jobs.values():
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            attr = self.attrs.get(queue.name)
            if attr is None:
                real = ssn.total_resource.clone().sub(total_guarantee).add(queue.guarantee)
                if queue.capability is not None:
                    real = _min(real, queue.capability)
                attr = self.attrs[queue.name] = QueueAttr(queue.name, queue.weight, guarantee=queue.guarantee.clone(), capability=queue.capability, real_capability=real)
            for task in job.tasks.values():
                if task.status in job_info.ALLOCATED:
                    attr.allocated.add(task.resreq)
                    attr.request.add(task.resreq)
                elif task.status is job_info.TaskStatus.PENDING:
                    attr.request.add(task.resreq)
            if job.phase == "Inqueue":
                attr.inqueue.add(job.deduct_sch_gated(job.min_resources()))
        self._deserve(ssn)

    def _deserve(self, ssn: Session) -> None:
        """Water-filling by weight until every queue is met or nothing remains."""
        remaining = ssn.total_resource.clone()
        met: set[str] = set()
        for _ in range(MAX_ROUNDS):
            open_attrs = [a for a in self.attrs.values() if a.name not in met]
            total_weight = sum(a.weight for a in open_attrs)
            if not open_attrs or total_weight == 0 or remaining.is_empty():
                break
            handed = resource.Resource()
            for attr in open_attrs:
                before = attr.deserved.clone()
                attr.deserved.add(remaining.clone().multiply(attr.weight / total_weight))
                attr.deserved = _min(attr.deserved, attr.real_capability)
                attr.deserved = _min(attr.deserved, attr.request) if not attr.request.is_empty() else resource.Resource()
                attr.deserved.set_max(attr.guarantee)
                if attr.request.less_equal(attr.deserved) or (attr.capability is not None and attr.capability.less_equal(attr.deserved)):
                    met.add(attr.name)
                handed.add(attr.deserved.clone().sub(before))
            remaining.sub(handed)
            if handed.is_empty():
                break

    def on_session_open(self, ssn: Session) -> None:
        self._build(ssn)

        def queue_order(left: queue_info.QueueInfo, right: queue_info.QueueInfo) -> int:
            ls = self.attrs[left.name].share() if left.name in self.attrs else 0.0
            rs = self.attrs[right.name].share() if right.name in self.attrs else 0.0
            return 0 if ls == rs else (-1 if ls < rs else 1)

        def within_deserved(queue: queue_info.QueueInfo, task: job_info.TaskInfo) -> bool:
            attr = self.attrs.get(queue.name)
            if attr is None:
                return True
            future = attr.allocated.clone().add(task.resreq)
            return all(future.get(k) <= attr.deserved.get(k) + resource.EPSILON for k in task.resreq.names() if task.resreq.get(k) > resource.EPSILON)

        def allocatable(queue: queue_info.QueueInfo, task: job_info.TaskInfo) -> bool:
            return queue.state == "Open" and within_deserved(queue, task)

        def reclaimable(reclaimer: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            # Take only from queues using more than they deserve, and only while they still do.
            chosen = []
            allocations: dict[str, resource.Resource] = {}
            for task in candidates:
                attr = self.attrs.get(ssn.jobs[task.job].queue)
                if attr is None:
                    continue
                allocated = allocations.setdefault(attr.name, attr.allocated.clone())
                if not allocated.less_equal(attr.deserved):
                    allocated.sub(task.resreq)
                    chosen.append(task)
            return chosen, interface.PERMIT

        def overused(queue: queue_info.QueueInfo) -> bool:
            attr = self.attrs.get(queue.name)
            return attr is not None and attr.deserved.less_equal(attr.allocated) and not attr.deserved.is_empty()

        def enqueueable(job: job_info.JobInfo) -> int:
            queue = ssn.queues[job.queue]
            if queue.state != "Open":
                return interface.REJECT
            attr = self.attrs.get(queue.name)
            if attr is None or not job.has_min_resources():
                return interface.PERMIT
            min_req = job.min_resources()
            future = min_req.clone().add(attr.allocated).add(attr.inqueue)
            if future.less_equal(attr.real_capability):
                attr.inqueue.add(job.deduct_sch_gated(min_req))
                return interface.PERMIT
            insufficient = future.insufficient(attr.real_capability)
            ssn.writer.event(job.podgroup, "Normal", "Unschedulable", "queue resource quota insufficient" + (": " + ", ".join(f"insufficient {n}" for n in insufficient) if insufficient else ""))
            return interface.REJECT

        ssn.add_queue_order_fn(NAME, queue_order)
        ssn.add_allocatable_fn(NAME, allocatable)
        def preemptive(queue: queue_info.QueueInfo, tasks: list[job_info.TaskInfo]) -> bool:
            # The tasks together (gangreclaim hands a job's pending tasks at once); a queue that is
            # not Open reclaims nothing.
            if queue.state != "Open":
                return False
            request = job_info.total_request(tasks)
            attr = self.attrs.get(queue.name)
            if attr is None:
                return True
            future = attr.allocated.clone().add(request)
            return all(future.get(k) <= attr.deserved.get(k) + resource.EPSILON for k in request.names() if request.get(k) > resource.EPSILON)

        ssn.add_preemptive_fn(NAME, preemptive)
        ssn.add_reclaimable_fn(NAME, reclaimable)
        ssn.add_overused_fn(NAME, overused)
        ssn.add_job_enqueueable_fn(NAME, enqueueable)

        def on_allocate(task: job_info.TaskInfo) -> None:
            attr = self.attrs.get(ssn.jobs[task.job].queue)
            if attr is not None:
                attr.allocated.add(task.resreq)

        def on_deallocate(task: job_info.TaskInfo) -> None:
            attr = self.attrs.get(ssn.jobs[task.job].queue)
            if attr is not None:
                attr.allocated.sub(task.resreq)

        ssn.event_handlers.append(EventHandler(on_allocate, on_deallocate))

    def on_session_close(self, ssn: Session) -> None:
        self.attrs.clear()
