"""capacity: queues with an explicit deserved share (spec.deserved), a hard cap (spec.capability)
and a floor (spec.guarantee.resource), instead of proportion's shares by weight.

A queue may allocate and enqueue up to its real capability (elastically beyond its deserved
share while others leave room), reclaims only while it is within its deserved share, and is
reclaimed from only while it holds more than its deserved share and never below its guarantee.
Queues go by spec.priority, then by the fraction of their deserved they hold. A queue that is not
Open allocates, enqueues and reclaims nothing. There is no overused check: capacity leaves that
to `preemptive`, as upstream does.

With `enableHierarchy: true` queues form the tree of spec.parent (see capacity_attrs.py): only
leaf queues run jobs, and a task must fit every queue from its leaf up to the root.

Upstream: pkg/scheduler/plugins/capacity/capacity.go, docs/user-guide/how_to_use_capacity_plugin.md,
docs/design/capacity-scheduling.md, docs/design/hierarchical-queue-on-capacity-plugin.md.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from reference_scheduler.api import resource
from reference_scheduler.scheduler.api import job_info, queue_info
from reference_scheduler.scheduler.framework import extension_points, interface
from reference_scheduler.scheduler.framework.session import EventHandler, Session
from reference_scheduler.scheduler.plugins import capacity_attrs as attrs_mod
from reference_scheduler.scheduler.plugins.capacity_attrs import QueueAttr

log = logging.getLogger(__name__)
NAME = "capacity"
OPEN = "Open"


class Capacity:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments
        self.attrs: dict[str, QueueAttr] = {}
        self.hierarchy = False
        # False when the queue tree is inconsistent: then nothing is allocated, enqueued or reclaimed.
        self.ready = True

    def on_session_open(self, ssn: Session) -> None:
        self.hierarchy = ssn.hierarchy_enabled(NAME)
        self.ready = True
        try:
            build = attrs_mod.build_tree if self.hierarchy else attrs_mod.build_flat
            self.attrs = build(ssn.queues, ssn.jobs, ssn.total_resource)
        except attrs_mod.HierarchyError as err:
            log.error("capacity: the queue hierarchy is not usable this session: %s", err)
            self.attrs, self.ready = {}, False
        ssn.add_queue_order_fn(NAME, self._queue_order)
        if self.hierarchy and self.ready:
            ssn.add_victim_queue_order_fn(NAME, self._victim_queue_order)
        ssn.add_reclaimable_fn(NAME, lambda reclaimer, reclaimees: self._reclaimable(ssn, reclaimees))
        ssn.add_preemptive_fn(NAME, self._preemptive)
        ssn.add_unified_evictable_fn(NAME, lambda context, candidates: self._unified_evictable(ssn, context, candidates))
        ssn.add_allocatable_fn(NAME, self._allocatable)
        ssn.add_job_enqueueable_fn(NAME, lambda job: self._enqueueable(ssn, job))

        def on_change(task: job_info.TaskInfo, sign: float) -> None:
            job = ssn.jobs.get(task.job)
            attr = self.attrs.get(job.queue) if job is not None else None
            if attr is None:
                return
            change = task.resreq.clone().multiply(sign)
            attr.allocated.add(change)
            attr.update_share()
            if self.hierarchy:
                for name in attr.ancestors:
                    self.attrs[name].allocated.add(change)

        ssn.event_handlers.append(EventHandler(lambda task: on_change(task, 1.0), lambda task: on_change(task, -1.0)))

    def _chain(self, queue: str) -> list[QueueAttr]:
        """The queue and, with hierarchy, its ancestors: leaf first."""
        attr = self.attrs[queue]
        return [attr, *(self.attrs[a] for a in reversed(attr.ancestors))] if self.hierarchy else [attr]

    def _queue_order(self, left: queue_info.QueueInfo, right: queue_info.QueueInfo) -> int:
        """Higher spec.priority first, then the smaller share of deserved. With hierarchy, leaf
        queues before the others, and two leaves compare the shares of their ancestors just below
        the deepest one they have in common."""
        if left.priority != right.priority:
            return -1 if left.priority > right.priority else 1
        lattr, rattr = self.attrs.get(left.name), self.attrs.get(right.name)
        if lattr is None or rattr is None:
            return 0
        if self.hierarchy:
            if lattr.leaf != rattr.leaf:
                return -1 if lattr.leaf else 1
            if lattr.leaf:
                level = attrs_mod.queue_level(lattr, rattr)
                if level + 1 < len(lattr.ancestors):
                    lattr = self.attrs[lattr.ancestors[level + 1]]
                if level + 1 < len(rattr.ancestors):
                    rattr = self.attrs[rattr.ancestors[level + 1]]
        return 0 if lattr.share == rattr.share else (-1 if lattr.share < rattr.share else 1)

    def _victim_queue_order(self, left: queue_info.QueueInfo, right: queue_info.QueueInfo, evictor: queue_info.QueueInfo) -> int:
        """With hierarchy, victims come first from the queue whose deepest ancestor shared with the
        evictor's queue is deeper: a sibling's before a cousin's. Upstream: capacity.go's victim
        queue order, getQueueLevel."""
        lattr, rattr, eattr = (self.attrs.get(q.name) for q in (left, right, evictor))
        if lattr is None or rattr is None or eattr is None:
            return 0
        left_level, right_level = attrs_mod.queue_level(lattr, eattr), attrs_mod.queue_level(rattr, eattr)
        return 0 if left_level == right_level else (-1 if left_level > right_level else 1)

    def _reclaimable(self, ssn: Session, reclaimees: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
        """Victims come from queues holding more than their deserved share, one after another
        while the queue still does, and never take a queue below its guarantee."""
        return self._victims_in_order(ssn, reclaimees, lambda attr, allocated, task: not attrs_mod.within(allocated, attr.deserved))

    def _victims_in_order(self, ssn: Session, candidates: list[job_info.TaskInfo], over_share: Callable[[QueueAttr, resource.Resource, job_info.TaskInfo], bool]) -> tuple[list[job_info.TaskInfo], int]:
        """The candidates taken in order, each judged against its queue as the ones before it left
        it: never below the guarantee, and only while `over_share` holds for the queue."""
        if not self.ready:
            return [], interface.REJECT
        victims = []
        allocations: dict[str, resource.Resource] = {}
        for task in candidates:
            attr = self.attrs.get(ssn.jobs[task.job].queue)
            if attr is None:
                continue
            allocated = allocations.setdefault(attr.name, attr.allocated.clone())
            if not over_share(attr, allocated, task) or not attr.guarantee.less_equal(allocated.clone().sub(task.resreq)):
                continue
            allocated.sub(task.resreq)
            victims.append(task)
        return victims, interface.PERMIT

    def _unified_evictable(self, ssn: Session, context: extension_points.EvictionContext, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
        """gangpreempt's victims are not capacity's to narrow. gangreclaim's are judged in the order
        given, each against its queue as the ones before it left it: never below the guarantee, and
        only while the queue holds more than its deserved share in a resource the task asks for.
        Upstream: capacity's UnifiedEvictableFn (v1.15)."""
        if context.kind == "gangpreempt":
            return candidates, interface.PERMIT

        def over_where_asked(attr: QueueAttr, allocated: resource.Resource, task: job_info.TaskInfo) -> bool:
            # A task asking for nothing the queue's deserved share names costs that share nothing;
            # otherwise the queue must hold more than deserved in a resource the task asks for.
            named = [name for name in task.resreq.names() if task.resreq.get(name) > 0 and name in attr.deserved.values]
            return not named or any(allocated.get(name) > attr.deserved.get(name) + resource.EPSILON for name in named)

        return self._victims_in_order(ssn, candidates, over_where_asked)

    def _preemptive(self, queue: queue_info.QueueInfo, tasks: list[job_info.TaskInfo]) -> bool:
        """A queue may reclaim for these tasks while, with them, it stays within its real
        capability in every resource they ask for and within its deserved share in at least one."""
        attr = self.attrs.get(queue.name)
        if not self.ready or queue.state != OPEN or attr is None:
            return False
        request = job_info.total_request(tasks)
        future = attr.allocated.clone().add(request)
        if attrs_mod.fits(future, attr.real_capability, request):
            return False
        return attrs_mod.some_within(future, attr.deserved, request)

    def _allocatable(self, queue: queue_info.QueueInfo, task: job_info.TaskInfo) -> bool:
        """With the task, the queue (and every ancestor) stays within its real capability."""
        if queue.state != OPEN or not self.ready:
            return False
        if queue.name not in self.attrs:
            return True
        if self.hierarchy and not self.attrs[queue.name].leaf:
            return False
        for attr in self._chain(queue.name):
            over = attrs_mod.fits(attr.allocated.clone().add(task.resreq), attr.real_capability, task.resreq)
            if over:
                log.debug("capacity: queue %s cannot take %s/%s: %s over its real capability", attr.name, task.namespace, task.name, over)
                return False
        return True

    def _enqueueable(self, ssn: Session, job: job_info.JobInfo) -> int:
        """A job enters its queue while its minimum resources, beside what the queue (and every
        ancestor) holds and has enqueued less its elastic part, fit the real capability."""
        if not self.ready:
            return interface.REJECT
        queue = ssn.queues[job.queue]
        attr = self.attrs.get(queue.name)
        if attr is None:
            return interface.PERMIT
        if (self.hierarchy and not attr.leaf) or queue.state != OPEN:
            return interface.REJECT
        if not job.has_min_resources():
            return interface.PERMIT
        min_req = job.min_resources()
        chain = self._chain(queue.name)
        for each in chain:
            future = min_req.clone().add(each.allocated).add(each.inqueue).sub(each.elastic)
            over = attrs_mod.fits(future, each.real_capability, min_req)
            if over:
                message = "queue resource quota insufficient: " + ", ".join(f"insufficient {name}" for name in over)
                ssn.writer.event(job.podgroup, "Normal", "Unschedulable", message)
                return interface.REJECT
        for each in chain:
            each.inqueue.add(job.deduct_sch_gated(min_req))
        return interface.PERMIT

    def on_session_close(self, ssn: Session) -> None:
        self.attrs = {}
