"""A statement: placements applied to the session at once and recorded, then committed together
(bound through the API) or discarded (undone in reverse). This is how a gang binds all or nothing.

Upstream: pkg/scheduler/framework/statement.go.
"""

from __future__ import annotations

import dataclasses
import logging

from reference_scheduler.scheduler.api import job_info, node_info
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)


@dataclasses.dataclass
class _Allocation:
    task: job_info.TaskInfo
    node: node_info.NodeInfo


class Statement:
    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self.operations: list[_Allocation] = []

    def allocate(self, task: job_info.TaskInfo, node: node_info.NodeInfo) -> None:
        task.status = job_info.TaskStatus.ALLOCATED
        task.node_name = node.name
        node.add_task(task)
        for handler in self.ssn.event_handlers:
            handler.allocate(task)
        self.operations.append(_Allocation(task, node))

    def discard(self) -> None:
        for op in reversed(self.operations):
            op.node.remove_task(op.task)
            op.task.status = job_info.TaskStatus.PENDING
            op.task.node_name = ""
            for handler in self.ssn.event_handlers:
                handler.deallocate(op.task)
        self.operations.clear()

    def commit(self) -> None:
        for op in self.operations:
            op.task.status = job_info.TaskStatus.BINDING
            self.ssn.writer.bind(op.task, op.node.name)
        self.operations.clear()
