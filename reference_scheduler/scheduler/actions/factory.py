"""The only place that maps an action's conf name to its implementation: imported, it registers
every built-in action with the framework's registry (framework/registry.py)."""

from __future__ import annotations

from reference_scheduler.scheduler.actions import (
    allocate,
    backfill,
    enqueue,
    gang_evict,
    preempt,
    reclaim,
    shuffle,
)
from reference_scheduler.scheduler.framework import registry

BUILDERS: dict[str, registry.ActionBuilder] = {
    enqueue.NAME: enqueue.Enqueue,
    allocate.NAME: allocate.Allocate,
    backfill.NAME: backfill.Backfill,
    preempt.NAME: preempt.Preempt,
    reclaim.NAME: reclaim.Reclaim,
    gang_evict.PREEMPT: gang_evict.GangPreempt,
    gang_evict.RECLAIM: gang_evict.GangReclaim,
    shuffle.NAME: shuffle.Shuffle,
}
for _name, _builder in BUILDERS.items():
    registry.register_action(_name, _builder)
