"""The only place that maps an action's conf name to its implementation."""

from __future__ import annotations

from typing import Callable

from reference_scheduler.scheduler.actions import allocate, backfill, enqueue, preempt, reclaim
from reference_scheduler.scheduler.framework import interface

BUILDERS: dict[str, Callable[[], interface.Action]] = {
    enqueue.NAME: enqueue.Enqueue,
    allocate.NAME: allocate.Allocate,
    backfill.NAME: backfill.Backfill,
    preempt.NAME: preempt.Preempt,
    reclaim.NAME: reclaim.Reclaim,
}
# Volcano's other actions: known names, not implemented by this slice (the conf is refused rather
# than silently run without them).
NOT_IMPLEMENTED = ("shuffle",)
NAMES = tuple(BUILDERS)
