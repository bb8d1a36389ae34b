"""The reference scheduler's in-memory harness: one scheduling cycle over given nodes, pods,
PodGroups, queues and a conf, with the cache's writes (binds, evictions, PodGroup statuses,
events, Queue allocated resources) recorded instead of sent, and the confs more than one module's
cases run. Shared by the table-driven cases of tests/reference/scheduler/ (a module per plugin and
per action), which build their objects with tests/reference/builders.py."""

from __future__ import annotations

import dataclasses
from typing import Any

from reference_scheduler.scheduler import conf_load, cycle_profile, features
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework
from tests.reference.builders import queue

GANG_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}]
- plugins: [{name: predicates}, {name: proportion}]
"""
PREEMPT_CONF = """
actions: "allocate, preempt"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: predicates}]
"""
TOPOLOGY_PREEMPT_CONF = PREEMPT_CONF + """
configurations:
- name: preempt
  arguments: {enableTopologyAwarePreemption: true}
"""
SHUFFLE_CONF = """
actions: "allocate, shuffle"
tiers:
- plugins: [{name: gang}, {name: pdb}]
- plugins: [{name: predicates}]
"""
PRIORITY_CLASSES = [{"metadata": {"name": "high"}, "value": 100}, {"metadata": {"name": "low"}, "value": 10}]


class FakeCache(cycle_profile.MemoryCache):
    """The real snapshot logic over given objects; writes are recorded instead of sent."""

    def __init__(self, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], podgroups: list[dict[str, Any]], queues: list[dict[str, Any]], priority_classes: list[dict[str, Any]] | None = None, pdbs: list[dict[str, Any]] | None = None, switched: features.Features = features.FULL, quotas: list[dict[str, Any]] | None = None) -> None:
        super().__init__(nodes, pods, podgroups, queues, priority_classes, pdbs, switched, quotas)
        self.evictions: list[str] = []
        self.eviction_reasons: list[str] = []
        self.binds: dict[str, str] = {}
        self.statuses: dict[str, dict[str, Any]] = {}
        self.events: list[tuple[str, str, str]] = []
        # queue -> the status.allocated written for it (None: a resource removed)
        self.queue_allocated: dict[str, dict[str, str | None]] = {}

    def bind(self, task: job_info.TaskInfo, node: str) -> None:
        self.binds[task.name] = node

    def evict(self, task: job_info.TaskInfo, job: job_info.JobInfo, reason: str) -> None:
        self.evictions.append(task.name)
        self.eviction_reasons.append(reason)

    def update_podgroup_status(self, job: job_info.JobInfo, status: dict[str, Any]) -> None:
        self.statuses[job.name] = status

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], reason, message))

    def update_queue_allocated(self, queue: str, allocated: dict[str, str | None]) -> None:
        self.queue_allocated[queue] = allocated


@dataclasses.dataclass
class Case:
    name: str
    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    podgroups: list[dict[str, Any]]
    conf: str = GANG_CONF
    queues: list[dict[str, Any]] = dataclasses.field(default_factory=lambda: [queue()])
    # pod -> node; pods not named must stay unbound
    binds: dict[str, str] = dataclasses.field(default_factory=dict)
    # only the number of binds (where which node does not matter)
    bind_count: int | None = None
    phases: dict[str, str] = dataclasses.field(default_factory=dict)
    # podgroup -> (condition type, reason, message fragment)
    conditions: dict[str, tuple[str, str, str]] = dataclasses.field(default_factory=dict)
    # pods evicted this cycle (None: not checked)
    evictions: list[str] | None = None
    # PodDisruptionBudgets the cycle sees, and the scheduler rules switched off (--disable)
    pdbs: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    disabled: frozenset[str] = frozenset()
    # ResourceQuotas the cycle sees (with the status the quota controller keeps)
    quotas: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # binds per PodGroup (where the split matters, not the nodes)
    per_job: dict[str, int] | None = None
    # (object name, reason, message) events that must have been recorded
    events: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)


def run_case(case: Case) -> FakeCache:
    """One cycle of the case's conf over its objects, judged against what the case expects; the
    cache, for what a test judges beyond the case (events)."""
    cache = FakeCache(case.nodes, case.pods, case.podgroups, case.queues, PRIORITY_CLASSES, case.pdbs, features.Features.without(set(case.disabled)), case.quotas)
    framework.run_cycle(cache, conf_load.parse(case.conf))
    if case.evictions is not None:
        assert cache.evictions == case.evictions
    if case.bind_count is not None:
        assert len(cache.binds) == case.bind_count, cache.binds
    else:
        assert cache.binds == case.binds
    for group, phase in case.phases.items():
        status = cache.statuses.get(group) or next(pg["status"] for pg in case.podgroups if pg["metadata"]["name"] == group)
        assert status["phase"] == phase, (group, status)
    for group, (type_, reason, fragment) in case.conditions.items():
        conditions = {c["type"]: c for c in cache.statuses[group]["conditions"]}
        assert conditions[type_]["reason"] == reason and fragment in conditions[type_]["message"], conditions[type_]
    if case.per_job is not None:
        groups = {p["metadata"]["name"]: p["metadata"]["annotations"][job_info.GROUP_NAME_ANNOTATION] for p in case.pods}
        bound = {group: sum(1 for name in cache.binds if groups[name] == group) for group in case.per_job}
        assert bound == case.per_job, cache.binds
    for event in case.events:
        assert event in cache.events, cache.events
    return cache


def plugin_conf(plugin: str) -> str:
    """enqueue and allocate with priority and gang, then predicates and the plugin given (its conf
    entry, as YAML list items indented under the second tier)."""
    return f"""
actions: "enqueue, allocate"
tiers:
- plugins: [{{name: priority}}, {{name: gang}}]
- plugins:
  - {{name: predicates}}
{plugin}
"""
