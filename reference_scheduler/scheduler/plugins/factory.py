"""The only place that maps a plugin's conf name to its builder: imported, it registers every
built-in plugin with the framework's registry (framework/registry.py)."""

from __future__ import annotations

import functools
from reference_scheduler.scheduler.framework import registry
from reference_scheduler.scheduler.plugins import capacity, drf, sla, task_topology
from reference_scheduler.scheduler.plugins import numa_aware
from reference_scheduler.scheduler.plugins import gpu_aware
from reference_scheduler.scheduler.plugins import gpu_podaffinity
from reference_scheduler.scheduler.plugins import network_topology_aware
from reference_scheduler.scheduler.plugins import binpack, conformance, gang, known, nodeorder, overcommit, predicates, priority, proportion

BUILDERS: dict[str, registry.PluginBuilder] = {
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
for _name, _builder in BUILDERS.items():
    registry.register_plugin(_name, _builder)
