"""The only place that maps a plugin's conf name to its builder: imported, it registers every
built-in plugin with the framework's registry (framework/registry.py)."""

from __future__ import annotations

import functools

from reference_scheduler.scheduler.framework import registry
from reference_scheduler.scheduler.plugins import (
    binpack,
    capacity,
    cdp,
    conformance,
    deviceshare,
    drf,
    gang,
    gpu_aware,
    gpu_podaffinity,
    known,
    network_topology_aware,
    nodegroup,
    nodeorder,
    numa_aware,
    overcommit,
    pdb,
    predicates,
    priority,
    proportion,
    resource_strategy_fit,
    resourcequota,
    sla,
    task_topology,
    tdm,
)

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
    pdb.NAME: pdb.Pdb,
    sla.NAME: sla.Sla,
    task_topology.NAME: task_topology.TaskTopology,
    nodeorder.NAME: nodeorder.NodeOrder,
    numa_aware.NAME: numa_aware.NumaAware,
    network_topology_aware.NAME: network_topology_aware.NetworkTopologyAware,
    cdp.NAME: cdp.Cdp,
    deviceshare.NAME: deviceshare.DeviceShare,
    nodegroup.NAME: nodegroup.NodeGroup,
    resource_strategy_fit.NAME: resource_strategy_fit.ResourceStrategyFit,
    resourcequota.NAME: resourcequota.ResourceQuota,
    tdm.NAME: tdm.Tdm,
    **{name: functools.partial(known.NotImplemented_, name) for name in known.NAMES},
}
for _name, _builder in BUILDERS.items():
    registry.register_plugin(_name, _builder)
