"""The scheduler's switchable features: `--disable` turns one off to build the broken scheduler a
suite must fail against (plugins and actions are switched off by leaving them out of the conf;
these are rules that live in the actions and the task model, with no conf name of their own)."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Features:
    """What the scheduler honors beyond its conf; each can be switched off (`--disable
    scheduling-gates,topology-aware-preemption,preemptable-label`)."""

    # A pod with spec.schedulingGates is neither placed nor counted as enqueued.
    scheduling_gates: bool = True
    # preempt's `enableTopologyAwarePreemption` argument (configurations of the conf).
    topology_aware_preemption: bool = True
    # The pod's `volcano.sh/preemptable` annotation or label keeps it from being a victim.
    preemptable_label: bool = True

    @classmethod
    def without(cls, names: set[str]) -> "Features":
        return cls(**{f.name: f.name.replace("_", "-") not in names for f in dataclasses.fields(cls)})

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name.replace("_", "-") for f in dataclasses.fields(cls))


# Everything on (frozen, so one instance serves as every default).
FULL = Features()
