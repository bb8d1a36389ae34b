"""The one result tree every report format is written from.

A run holds scenario results; each carries its verdict, the checks that decided it (expected versus
observed), and the timeline the observer recorded, so a reader can see exactly why it failed.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    # The implementation does not claim a capability the scenario requires: reported, never scored.
    NOT_CLAIMED = "not-claimed"
    # The scenario applies to other Volcano releases than the one the implementation is (or
    # models): shown, never scored, and not a missing capability.
    NOT_APPLICABLE = "not-applicable"
    # The kit or the cluster failed: never counted against the implementation, always explained.
    ERROR = "error"
    # Repeated (`vck run --repeat N`), its attempts did not all end alike: never a pass, and a
    # FLAKY MUST scenario keeps a run from being certified. Every attempt is kept as evidence.
    FLAKY = "flaky"


class Level(str, enum.Enum):
    MUST = "MUST"
    SHOULD = "SHOULD"


# How much a scenario of each level weighs in a score.
LEVEL_WEIGHT = {Level.MUST: 3, Level.SHOULD: 1}


@dataclasses.dataclass(frozen=True)
class Check:
    """One expectation or waiting step, judged."""

    description: str
    passed: bool
    expected: str
    observed: str
    # Seconds since the scenario started when the verdict was reached.
    at_s: float
    # The kinds of object the check looked at (Pod, Job, ...): the timeline entries that explain
    # it (report/explain.py); empty: not known (every kind).
    looked_at: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class TimelineEntry:
    """One observed change: a watch event, reduced to what a reader needs."""

    t_s: float
    event: str  # ADDED | MODIFIED | DELETED | STEP
    kind: str
    namespace: str
    name: str
    # Kind-specific essentials: phase, node, reason, message, conditions...
    summary: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class ScenarioResult:
    id: str
    suite: str
    title: str
    level: Level
    cites: tuple[str, ...]
    requires: tuple[str, ...]
    path: str
    status: Status
    # One line: why it passed, failed, was not claimed, or errored.
    reason: str
    # The scenario's own time: its setup objects, steps and windows, and judging. The kit's time
    # around it (nodes, the implementation taking the scenario's conf, cleanup) is in phases_s
    # (`overhead_s`); a worker's cluster and implementation start is the run's (RunMetadata.setup_s).
    duration_s: float
    checks: tuple[Check, ...] = ()
    timeline: tuple[TimelineEntry, ...] = ()
    missing_capabilities: tuple[str, ...] = ()
    # Named figures a scenario reports (for example fragmentation with a plugin on and off).
    figures: dict[str, float] = dataclasses.field(default_factory=dict)
    # Where the duration went, in seconds: the kit's own work (PHASES_OVERHEAD) and the scenario's
    # body (its setup objects, steps and windows), so a slow run shows what to cut.
    phases_s: dict[str, float] = dataclasses.field(default_factory=dict)
    # Which attempt this is (1 to N) in a run that repeats every scenario N times.
    attempt: int = 1
    # A repeated scenario's verdict over all its attempts: every attempt's own result, in order
    # (their `attempts` empty). Empty when the scenario ran once.
    attempts: tuple[ScenarioResult, ...] = ()

    @property
    def overhead_s(self) -> float:
        """The kit's own time around the scenario (its setup and cleanup)."""
        return sum(v for k, v in self.phases_s.items() if k in PHASES_OVERHEAD)


# The phases of a scenario run that are the kit's cost, not the scenario's: shaping nodes, having
# the implementation run the scenario's conf, making device objects, a namespace, starting the
# observer, and cleaning up.
PHASES_OVERHEAD = ("nodes", "implementation", "devices", "namespace", "observer", "cleanup")
PHASE_BODY = "body"


@dataclasses.dataclass(frozen=True)
class RunMetadata:
    run_id: str
    implementation: str
    backend: str
    # Component versions: kit, kubernetes, etcd, kwok, the implementation's own.
    versions: dict[str, str]
    started_at: str  # RFC 3339
    wall_time_s: float
    time_scale: float
    command: str
    # Parallel workers, each with its own cluster (reports written before this field: 1).
    workers: int = 1
    # How many scenarios the run selected (0: not recorded, in reports written before this field).
    selected: int = 0
    # Why the run ended before every selected scenario had a verdict ("SIGINT", "SIGTERM", ...);
    # empty when it ran to the end. An interrupted run is never certified.
    interrupted: str = ""
    # `--repeat`: how many times each scenario ran; `--stress`: busy processes beside the run.
    repeat: int = 1
    stress: int = 0
    # The kit's own time before scenarios could run, in seconds: the run's (`toolchain`, the
    # implementation's `build`) and, per worker, `<worker> cluster` and `<worker> implementation`
    # (its first start). Never charged to a scenario.
    setup_s: dict[str, float] = dataclasses.field(default_factory=dict)
    # `--shard K/N`: which part of the selection this run judged ("" for the whole of it).
    shard: str = ""
    # The digest of the whole split (conformance/shards.plan): shards of one run share it.
    shard_plan: str = ""

    @property
    def complete(self) -> bool:
        return not self.interrupted


@dataclasses.dataclass(frozen=True)
class Tally:
    passed: int = 0
    failed: int = 0
    not_claimed: int = 0
    error: int = 0
    flaky: int = 0
    not_applicable: int = 0
    # Weighted score over claimed, judged scenarios (passed + failed), 0..1; None when none.
    score: float | None = None
    must_passed: int = 0
    must_claimed: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.not_claimed + self.error + self.flaky + self.not_applicable


@dataclasses.dataclass(frozen=True)
class RunResult:
    metadata: RunMetadata
    scenarios: tuple[ScenarioResult, ...]
