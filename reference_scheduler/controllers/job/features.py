"""The job controller's switchable features: `--disable` turns one off to build the broken
controller a suite must fail against."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Features:
    """What the controller does; each can be switched off to build the broken controller a suite
    must fail against (`--disable policies,job-plugins,...`)."""

    policies: bool = True
    job_plugins: bool = True
    dependson: bool = True
    ttl: bool = True
    commands: bool = True
    elastic: bool = True
    # Copying a Job's spec.networkTopology, and its tasks' partitions as a subGroupPolicy, to its
    # PodGroup, where the scheduler reads them.
    network_topology: bool = True
    # A Job's spec.volumes: claims named or created, mounted in every pod (volumes.py).
    volumes: bool = True

    @classmethod
    def without(cls, names: set[str]) -> "Features":
        return cls(**{f.name: f.name.replace("_", "-") not in names for f in dataclasses.fields(cls)})


# The whole controller, nothing switched off (frozen, so one instance serves as every default).
FULL = Features()
