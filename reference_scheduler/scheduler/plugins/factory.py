"""The only place that maps a plugin's conf name to its builder."""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.plugins import capacity, drf, sla, task_topology
from reference_scheduler.scheduler.plugins import numa_aware
from reference_scheduler.scheduler.plugins import gpu_aware
from reference_scheduler.scheduler.plugins import gpu_podaffinity
from reference_scheduler.scheduler.plugins import network_topology_aware
from reference_scheduler.scheduler.plugins import binpack, conformance, gang, known, nodeorder, overcommit, predicates, priority, proportion

Builder = Callable[[Mapping[str, Any]], interface.Plugin]
BUILDERS: dict[str, Builder] = {
    binpack.NAME: binpack.Binpack,
    capacity.NAME: capacity.Capacity,
    drf.NAME: drf.Drf,
    gpu_aware.NAME: gpu_aware.GpuAware,
    gpu_podaffinity.NAME: gpu_podaffinity.GpuPodAffinity,
    conformance.NAME: conformance.Conformance,
    gang.NAME: gang.Gang,
    priority.NAME: priority.Priority,
    predicates.NAME: predicates.Predicates,
    proportion.NAME: proportion.Proportion,
    overcommit.NAME: overcommit.Overcommit,
    sla.NAME: sla.Sla,
    task_topology.NAME: task_topology.TaskTopology,
    nodeorder.NAME: nodeorder.NodeOrder,
    numa_aware.NAME: numa_aware.NumaAware,
    network_topology_aware.NAME: network_topology_aware.NetworkTopologyAware,
    **{name: functools.partial(known.NotImplemented_, name) for name in known.NAMES},
}
NAMES = tuple(BUILDERS)
