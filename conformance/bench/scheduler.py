"""`vck bench scheduler`: how fast an implementation binds gangs on kwok nodes, against what the
cluster itself can do.

First the ceiling: on a fresh cluster of `--nodes` kwok nodes with no scheduler, pods are created
and then bound as fast as the bench's lean client asks (wire.py). Then each implementation
(`--impl`, and `--vs` back to back) on a fresh cluster of the same shape, in one mode
(measure.py): scheduler-only (the default), end-to-end or steady arrival; `--repeat N` does it
all N times, alternating the implementations' order. Printed: binds/s and
its ratio to the ceiling's, p50/p99 time-to-bind per pod and time-to-whole-gang per gang, the CPU
seconds and peak memory of every component, the API writes per bound pod by client, and the load
average; written: bench.json and index.html (a chart of pods bound over time) under `--out`.
Figures are printed, never asserted on time in a test.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Callable

from conformance.bench import figures, measure, render, stage, workload

# A plain gang conf, the same for every implementation.
BENCH_CONF: dict[str, Any] = {
    "actions": "enqueue, allocate, backfill",
    "tiers": [
        {"plugins": [{"name": "priority"}, {"name": "gang"}]},
        {"plugins": [{"name": "predicates"}, {"name": "proportion"}]},
    ],
}
CEILING = "ceiling"
MODES = (*measure.MODES, CEILING)
Progress = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class BenchConfig:
    nodes: int = 10
    pods: int = 100
    gang: int = 10
    impl: str = "reference"
    # A second implementation, run the same way right after the first.
    vs: str | None = None
    # Any further ones (`vck matrix` benches every column), each run the same way in turn.
    more: tuple[str, ...] = ()
    mode: str = measure.SCHEDULER_ONLY
    # podgroups (PodGroups and pods: the scheduler alone) or jobs (Volcano Jobs: end to end).
    workload: str | None = None
    # steady: pods per second, in whole gangs.
    rate: float = 100.0
    cluster: str = "vck-bench"
    node_cpu: str = "32"
    # Seconds to wait for the last bind after the start.
    timeout_s: float = 600.0
    # Where bench.json and index.html go (None: nowhere).
    out: pathlib.Path | None = None
    # Rounds: each measures the ceiling, then every implementation (their order alternating
    # from round to round), so a shared machine's ups and downs fall on all of them alike.
    repeat: int = 1

    @property
    def kind(self) -> str:
        """The workload: end-to-end takes Jobs, the others PodGroups, unless told."""
        return self.workload or (workload.JOBS if self.mode == measure.END_TO_END else workload.PODS)

    def impls(self) -> list[str]:
        if self.mode == CEILING:
            return []
        return [self.impl] + ([self.vs] if self.vs else []) + list(self.more)

    def validate(self) -> list[str]:
        problems = []
        if self.mode not in MODES:
            problems.append(f"--mode {self.mode!r}: use one of {', '.join(MODES)}")
        if self.kind not in workload.WORKLOADS:
            problems.append(f"--workload {self.kind!r}: use one of {', '.join(workload.WORKLOADS)}")
        if self.mode == measure.SCHEDULER_ONLY and self.kind == workload.JOBS:
            problems.append("--mode scheduler-only creates PodGroups and pods; Jobs need the controller: use --mode end-to-end")
        if self.nodes < 1 or self.pods < 1 or self.gang < 1:
            problems.append("--nodes, --pods and --gang must be at least 1")
        elif self.pods % self.gang:
            problems.append(f"--pods {self.pods} is not a multiple of --gang {self.gang}")
        if self.rate <= 0:
            problems.append("--rate must be above 0 pods/s")
        if self.repeat < 1:
            problems.append("--repeat must be at least 1")
        return problems


def run(config: BenchConfig, progress: Progress) -> figures.Report:
    """The ceiling, then each implementation (ValueError: a config that cannot run)."""
    problems = config.validate()
    if problems:
        raise ValueError("; ".join(problems))
    ceilings, runs = [], []
    for round_ in range(config.repeat):
        with stage.cluster(config.cluster, config.nodes, config.node_cpu, progress) as where:
            ceilings.append(measure.ceiling(where, config.pods, config.gang, progress))
        progress(f"bench: round {round_ + 1}: ceiling {ceilings[-1].creates_per_s:.1f} creates/s, {ceilings[-1].binds_per_s:.1f} binds/s")
        specs = config.impls()
        for spec in specs if round_ % 2 == 0 else specs[::-1]:
            with stage.cluster(config.cluster, config.nodes, config.node_cpu, progress) as where:
                shape = workload.Shape(config.pods, config.gang, where.namespace, config.kind)
                run = measure.implementation(where, spec, BENCH_CONF, shape, config.mode, config.rate, config.timeout_s, progress)
            runs.append(dataclasses.replace(run, round=round_))
            progress(f"bench: round {round_ + 1}: {run.impl}: {run.bound} of {config.pods} bound, {run.binds_per_s:.1f} binds/s")
    report = figures.Report(
        nodes=config.nodes, pods=config.pods, gang=config.gang, mode=config.mode, workload=config.kind,
        rate=config.rate if config.mode == measure.STEADY else None, ceilings=tuple(ceilings), runs=tuple(runs),
    )
    if config.out is not None:
        write(report, config.out)
    return report


def write(report: figures.Report, folder: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """bench.json and index.html in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    data, page = folder / "bench.json", folder / "index.html"
    data.write_text(json.dumps(figures.to_json(report), indent=1) + "\n")
    page.write_text(render.page(report))
    return data, page
