"""Nodes with what is used on them. Upstream: pkg/scheduler/api/node_info.go."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference_scheduler.api import resource
from reference_scheduler.kube import quantity
from reference_scheduler.scheduler.api import job_info, node_matrix

# Where a task's request is counted, by its status (everything else: used).
_COUNTED_IN = {
    job_info.TaskStatus.PIPELINED: ("pipelined",),
    job_info.TaskStatus.RELEASING: ("used", "releasing"),
}


@dataclasses.dataclass
class NodeInfo:
    name: str
    node: dict[str, Any]
    allocatable: resource.Resource
    max_pods: int
    used: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    # Held by pods being deleted (freed soon) and promised to pipelined tasks (taken soon).
    releasing: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    pipelined: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    pod_count: int = 0
    tasks: dict[str, job_info.TaskInfo] = dataclasses.field(default_factory=dict)
    # The status each task was counted under, so removal undoes exactly what adding did.
    counted_as: dict[str, job_info.TaskStatus] = dataclasses.field(default_factory=dict)
    # The session's arrays and this node's row in them, once attached: every change is written
    # there too, so vectorised predicates and scores see what the objects see.
    matrix: node_matrix.NodeMatrix | None = dataclasses.field(default=None, repr=False)
    row: int = -1

    @classmethod
    def from_node(cls, node: dict[str, Any]) -> NodeInfo:
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        return cls(
            name=node["metadata"]["name"],
            node=node,
            allocatable=resource.Resource.from_list(allocatable),
            max_pods=int(quantity.parse(allocatable.get("pods", 110))),
        )

    @property
    def idle(self) -> resource.Resource:
        return self.allocatable.clone().sub(self.used)

    def future_idle(self) -> resource.Resource:
        """What will be free once releasing pods are gone and pipelined tasks have landed.
        Upstream: NodeInfo.FutureIdle."""
        return self.idle.add(self.releasing).sub(self.pipelined)

    @property
    def labels(self) -> dict[str, str]:
        return self.node["metadata"].get("labels") or {}

    @property
    def unschedulable(self) -> bool:
        return bool((self.node.get("spec") or {}).get("unschedulable"))

    @property
    def taints(self) -> list[dict[str, Any]]:
        return (self.node.get("spec") or {}).get("taints") or []

    def attach(self, matrix: node_matrix.NodeMatrix) -> None:
        self.matrix = matrix
        self.row = matrix.index[self.name]
        matrix.add(self.row, "allocatable", self.allocatable, 1)
        for kind in ("used", "releasing", "pipelined"):
            matrix.add(self.row, kind, getattr(self, kind), 1)
        matrix.pod_count[self.row] = self.pod_count
        matrix.max_pods[self.row] = self.max_pods
        matrix.unschedulable[self.row] = self.unschedulable

    def add_task(self, task: job_info.TaskInfo) -> None:
        if task.uid in self.tasks:
            return
        self.tasks[task.uid] = task
        self.counted_as[task.uid] = task.status
        self._count(task.resreq, task.status, 1)

    def remove_task(self, task: job_info.TaskInfo) -> None:
        if self.tasks.pop(task.uid, None) is not None:
            self._count(task.resreq, self.counted_as.pop(task.uid), -1)

    def update_task(self, task: job_info.TaskInfo) -> None:
        """Recount a task whose status changed (evicted: now releasing)."""
        self.remove_task(task)
        self.add_task(task)

    def _count(self, request: resource.Resource, status: job_info.TaskStatus, sign: int) -> None:
        change = request.clone().multiply(sign)
        for kind in _COUNTED_IN.get(status, ("used",)):
            getattr(self, kind).add(change)
            if self.matrix is not None:
                self.matrix.add(self.row, kind, request, sign)
        self.pod_count += sign
        if self.matrix is not None:
            self.matrix.pod_count[self.row] += sign
