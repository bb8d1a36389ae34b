"""A statement: session changes (allocate, pipeline, evict) applied at once and recorded, then
committed together (binds and evictions sent to the API) or discarded (undone in reverse). This is
how a gang binds all or nothing, and how preemption evicts only when its preemptor gets a place.

Upstream: pkg/scheduler/framework/statement.go.
"""

from __future__ import annotations

import dataclasses
import logging

from reference_scheduler.scheduler.api import job_info, node_info
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)


@dataclasses.dataclass
class _Operation:
    kind: str  # allocate | pipeline | evict
    task: job_info.TaskInfo
    node: node_info.NodeInfo
    # evict: why (preempt, reclaim) and the status to restore on discard.
    reason: str = ""
    previous: job_info.TaskStatus = job_info.TaskStatus.PENDING


class Statement:
    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self.operations: list[_Operation] = []

    def allocate(self, task: job_info.TaskInfo, node: node_info.NodeInfo) -> None:
        self._place(task, node, job_info.TaskStatus.ALLOCATED)
        self.operations.append(_Operation("allocate", task, node))

    def pipeline(self, task: job_info.TaskInfo, node: node_info.NodeInfo) -> None:
        """Promise the task a node whose resources are still being released."""
        self._place(task, node, job_info.TaskStatus.PIPELINED)
        self.operations.append(_Operation("pipeline", task, node))

    def unpipeline(self, task: job_info.TaskInfo) -> None:
        """Take back a pipelined task's promised node at once: it is Pending again.
        Upstream: Statement.UnPipeline."""
        node = self.ssn.nodes.get(task.node_name)
        if node is not None:
            node.remove_task(task)
        task.status = job_info.TaskStatus.PENDING
        task.node_name = ""
        for handler in self.ssn.event_handlers:
            handler.deallocate(task)

    def evict(self, task: job_info.TaskInfo, reason: str) -> None:
        node = self.ssn.nodes[task.node_name]
        previous = task.status
        task.status = job_info.TaskStatus.RELEASING
        node.update_task(task)
        for handler in self.ssn.event_handlers:
            handler.deallocate(task)
        self.operations.append(_Operation("evict", task, node, reason, previous))

    def _place(self, task: job_info.TaskInfo, node: node_info.NodeInfo, status: job_info.TaskStatus) -> None:
        task.status = status
        task.node_name = node.name
        node.add_task(task)
        for handler in self.ssn.event_handlers:
            handler.allocate(task)

    def discard(self) -> None:
        for op in reversed(self.operations):
            if op.kind == "evict":
                op.task.status = op.previous
                op.node.update_task(op.task)
                for handler in self.ssn.event_handlers:
                    handler.allocate(op.task)
                continue
            op.node.remove_task(op.task)
            op.task.status = job_info.TaskStatus.PENDING
            op.task.node_name = ""
            for handler in self.ssn.event_handlers:
                handler.deallocate(op.task)
        self.operations.clear()

    def commit(self) -> None:
        binds = sum(1 for op in self.operations if op.kind == "allocate")
        bound = 0
        for op in self.operations:
            if op.kind == "evict":
                log.info("evict %s/%s from %s (%s)", op.task.namespace, op.task.name, op.node.name, op.reason)
                self.ssn.writer.evict(op.task, self.ssn.jobs[op.task.job], op.reason)
            elif op.kind == "allocate":
                op.task.status = job_info.TaskStatus.BINDING
                self.ssn.writer.bind(op.task, op.node.name)
                bound += 1
                # One line per bind: the trail of a gang's commit (the scheduler chaos test kills
                # the scheduler right after the first of these).
                log.info("bound %s/%s to %s (gang %s: %d of %d)", op.task.namespace, op.task.name, op.node.name, op.task.job, bound, binds)
            # A pipelined task stays promised for the rest of the cycle; the next cycle's
            # allocate binds it once the node has room.
        self.operations.clear()
