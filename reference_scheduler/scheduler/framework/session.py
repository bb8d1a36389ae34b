"""A session: one scheduling cycle over a snapshot, with one function table per extension point.

Plugins register closures in `on_session_open` through the session's typed calls, one per point
(`ssn.add_reclaimable_fn(NAME, fn)`, extension_points.py); the dispatchers in session_plugins.py
walk the tiers to combine them. Nothing here is module-level state.
Upstream: pkg/scheduler/framework/session.go, framework.go.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import uuid
from typing import Any, Callable, Protocol

from reference_scheduler.api import resource
from reference_scheduler.scheduler import conf, features
from reference_scheduler.scheduler.api import (
    hyper_node_info,
    job_info,
    node_info,
    node_matrix,
    queue_info,
)
from reference_scheduler.scheduler.framework import extension_points

log = logging.getLogger(__name__)


class Writer(Protocol):
    """What a session may do to the cluster: the cache implements it against the API server."""

    def bind(self, task: job_info.TaskInfo, node: str) -> None: ...

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None: ...

    def evict(self, task: job_info.TaskInfo, job: job_info.JobInfo, reason: str) -> None: ...


@dataclasses.dataclass
class EventHandler:
    allocate: Callable[[job_info.TaskInfo], None]
    deallocate: Callable[[job_info.TaskInfo], None]


class Session(extension_points.ExtensionPoints):
    def __init__(
        self,
        jobs: dict[str, job_info.JobInfo],
        nodes: dict[str, node_info.NodeInfo],
        queues: dict[str, queue_info.QueueInfo],
        configuration: conf.Conf,
        writer: Writer,
    ) -> None:
        super().__init__()
        self.uid = str(uuid.uuid4())
        self.jobs = jobs
        self.nodes = nodes
        self.queues = queues
        self.conf = configuration
        self.tiers = configuration.tiers
        self.writer = writer
        self.event_handlers: list[EventHandler] = []
        self.plugins: dict[str, Any] = {}
        # HyperNode and Numatopology objects by name (set by open_session from the cache).
        self.hypernodes: dict[str, dict[str, Any]] = {}
        self.numatopologies: dict[str, dict[str, Any]] = {}
        # PodDisruptionBudgets as the cycle found them (the pdb plugin reads them).
        self.disruption_budgets: list[dict[str, Any]] = []
        # ResourceQuotas as the cycle found them (the resourcequota plugin reads their status).
        self.resource_quotas: list[dict[str, Any]] = []
        # What plugins keep from one cycle to the next, by a key of their own (tdm's last
        # eviction round): the cache keeps this dict, as upstream plugins keep package variables.
        self.plugin_memory: dict[str, Any] = {}
        # The rules `--disable` switched off (features.py), set by open_session from the cache.
        self.features = features.FULL
        # Exclusive CPUs given to pods in earlier sessions, pod uid -> (node, CPU ids): the cache
        # keeps this dict across sessions and numa-aware updates it. Upstream: the cache's
        # NumaSchedulerInfo, narrowed by Session.UpdateSchedulerNumaInfo.
        self.cpu_assignments: dict[str, tuple[str, frozenset[int]]] = {}
        # Each PodGroup's HyperNode as the cycle found it, to tell at close whether allocate
        # recorded a new one. Upstream: Session.PodGroupOldState.Annotations.
        self.allocated_hypernodes_before = {uid: hyper_node_info.allocated_hypernode(job) for uid, job in jobs.items()}
        self.total_resource = resource.Resource()
        for node in nodes.values():
            self.total_resource.add(node.allocatable)
        # Nodes in name order: the row order of the matrix and the order ties are broken in.
        self._node_list = [nodes[n] for n in sorted(nodes)]
        names: set[str] = set()
        for node in self._node_list:
            names.update(node.allocatable.names())
        for job in jobs.values():
            for task in job.tasks.values():
                names.update(task.resreq.names())
        self.matrix = node_matrix.NodeMatrix([n.name for n in self._node_list], names)
        for node in self._node_list:
            node.attach(self.matrix)
        # Per-cycle memo of a task's request as a matrix row (tasks are placed many times over).
        self._requests: dict[str, node_matrix.Request] = {}

    def hierarchy_enabled(self, plugin: str) -> bool:
        """Whether the plugin's first entry in the tiers says `enableHierarchy: true`.
        Upstream: Session.HierarchyEnabled."""
        return next((option.hierarchy for tier in self.tiers for option in tier if option.name == plugin), False)

    @functools.cached_property
    def hyper_nodes_info(self) -> hyper_node_info.HyperNodesInfo:
        """The HyperNode tree, built on first use from `hypernodes` (which open_session sets
        after construction) and the nodes' labels. Upstream: Session.HyperNodes, RealNodesList."""
        return hyper_node_info.build(self.hypernodes, {name: node.labels for name, node in self.nodes.items()})

    def node_list(self) -> list[node_info.NodeInfo]:
        return list(self._node_list)

    def request(self, task: job_info.TaskInfo) -> node_matrix.Request:
        found = self._requests.get(task.uid)
        if found is None:
            found = self._requests[task.uid] = node_matrix.Request(self.matrix, task.resreq)
        return found

    def update_condition(self, job: job_info.JobInfo, condition: dict[str, Any]) -> None:
        """Replace the PodGroup's condition of the same type. Upstream: Session.UpdatePodGroupCondition."""
        status = job.podgroup.setdefault("status", {})
        conditions = [c for c in status.get("conditions") or [] if c.get("type") != condition["type"]]
        conditions.append(condition)
        status["conditions"] = conditions
