"""The rules the scheduler can switch off (scheduler/features.py, `--disable`) to build the broken
builds the kit's tests need."""

from __future__ import annotations

from reference_scheduler.scheduler import features


def test_features_without_switches_off_only_what_is_named() -> None:
    switched = features.Features.without({"scheduling-gates"})
    assert not switched.scheduling_gates and switched.topology_aware_preemption and switched.preemptable_label
