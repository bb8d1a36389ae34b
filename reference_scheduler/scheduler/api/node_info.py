"""Nodes with what is used on them. Upstream: pkg/scheduler/api/node_info.go."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference_scheduler.kube import quantity
from reference_scheduler.scheduler.api import job_info, resource


@dataclasses.dataclass
class NodeInfo:
    name: str
    node: dict[str, Any]
    allocatable: resource.Resource
    max_pods: int
    used: resource.Resource = dataclasses.field(default_factory=resource.Resource)
    pod_count: int = 0
    tasks: dict[str, job_info.TaskInfo] = dataclasses.field(default_factory=dict)

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

    @property
    def labels(self) -> dict[str, str]:
        return self.node["metadata"].get("labels") or {}

    @property
    def unschedulable(self) -> bool:
        return bool((self.node.get("spec") or {}).get("unschedulable"))

    @property
    def taints(self) -> list[dict[str, Any]]:
        return (self.node.get("spec") or {}).get("taints") or []

    def add_task(self, task: job_info.TaskInfo) -> None:
        if task.uid in self.tasks:
            return
        self.tasks[task.uid] = task
        self.used.add(task.resreq)
        self.pod_count += 1

    def remove_task(self, task: job_info.TaskInfo) -> None:
        if self.tasks.pop(task.uid, None) is not None:
            self.used.sub(task.resreq)
            self.pod_count -= 1
