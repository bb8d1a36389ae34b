"""The bench's results: per round, the ceiling of the cluster and one run per implementation;
how each compares with its round's ceiling, and the implementations with each other over all
rounds (medians). Data only (what render.py prints and draws, and what bench.json holds)."""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Sequence

from conformance.bench import audit, usage

SCHEMA = "vck.bench/v1"


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (inclusive method), None for no values."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


@dataclasses.dataclass(frozen=True)
class Window:
    """When a measure ran (epoch seconds) and the machine's load average (1, 5, 15 min) at its
    start and end: on a shared machine, figures mean little without it."""

    start: float
    end: float
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float]

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)


@dataclasses.dataclass(frozen=True)
class Ceiling:
    """What the cluster does with no scheduler: pods created, then bound, as fast as the bench's
    client can ask (wire.py), on the same nodes."""

    pods: int
    creates_per_s: float
    binds_per_s: float
    # Requests the API server refused or that failed (the rates count only the others).
    failed: int
    # Each bind's completion, seconds after the first Binding was sent.
    bind_times_s: tuple[float, ...]
    components: tuple[usage.Usage, ...]
    window: Window


@dataclasses.dataclass(frozen=True)
class Run:
    """One implementation over the workload. Times are the API server's (audit.py)."""

    impl: str
    mode: str
    pods: int
    gang: int
    bound: int
    # From the start (the implementation's, or the first create for steady arrival) to the last bind.
    seconds: float
    # Per bound pod: from when it could be scheduled (the start, or its creation) to its bind.
    bind_s: tuple[float, ...]
    # Per whole gang: from when it was complete (the start, or its last member's creation) to
    # its last bind.
    gang_s: tuple[float, ...]
    # Each bind, seconds after the start (the chart's line).
    bound_times_s: tuple[float, ...]
    # Gangs with some but not all pods bound when the measure ended.
    partial_gangs: int
    # Seconds the bench took to create the workload (before the start, except steady arrival).
    create_s: float
    components: tuple[usage.Usage, ...]
    writes: tuple[tuple[audit.Write, int], ...]
    window: Window
    # Why the run ended without every pod bound (a process exited, the deadline), or "".
    problem: str = ""
    # Which round (--repeat) it belongs to: its ceiling is that round's.
    round: int = 0

    @property
    def complete(self) -> bool:
        return self.bound == self.pods and not self.problem

    @property
    def binds_per_s(self) -> float:
        return self.bound / self.seconds if self.seconds > 0 else 0.0

    def ratio(self, ceiling: Ceiling | None) -> float | None:
        """binds/s as a share of the ceiling's."""
        if ceiling is None or ceiling.binds_per_s <= 0:
            return None
        return self.binds_per_s / ceiling.binds_per_s


@dataclasses.dataclass(frozen=True)
class Report:
    nodes: int
    pods: int
    gang: int
    mode: str
    workload: str
    rate: float | None
    # One per round, in order.
    ceilings: tuple[Ceiling, ...]
    runs: tuple[Run, ...]

    @property
    def complete(self) -> bool:
        return all(r.complete for r in self.runs) and all(c.failed == 0 for c in self.ceilings)

    def ceiling_of(self, run: Run) -> Ceiling | None:
        return self.ceilings[run.round] if run.round < len(self.ceilings) else None

    def impls(self) -> list[str]:
        """The implementations in the order they first ran."""
        return list(dict.fromkeys(run.impl for run in self.runs))

    def median_binds_per_s(self, impl: str) -> float:
        return statistics.median(run.binds_per_s for run in self.runs if run.impl == impl)

    def median_ratio(self, impl: str) -> float | None:
        ratios = [r for run in self.runs if run.impl == impl and (r := run.ratio(self.ceiling_of(run))) is not None]
        return statistics.median(ratios) if ratios else None


def _usage(items: Sequence[usage.Usage]) -> dict[str, Any]:
    return {u.component: {"cpu_s": u.cpu_s, "rss_peak_mib": round(u.rss_peak_bytes / 2**20, 1), "rss_end_mib": round(u.rss_end_bytes / 2**20, 1)} for u in items}


def _window(w: Window) -> dict[str, Any]:
    return {"start": w.start, "end": w.end, "seconds": round(w.seconds, 3), "load_average_start": list(w.load_start), "load_average_end": list(w.load_end)}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def to_json(report: Report) -> dict[str, Any]:
    """bench.json: every figure, for CI trend lines."""
    impls = report.impls()
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "nodes": report.nodes, "pods": report.pods, "gang": report.gang,
        "mode": report.mode, "workload": report.workload, "rate": report.rate,
        "complete": report.complete,
        "ceilings": [
            {
                "round": i, "pods": c.pods, "bound": len(c.bind_times_s), "creates_per_s": round(c.creates_per_s, 1), "binds_per_s": round(c.binds_per_s, 1),
                "failed": c.failed, "components": _usage(c.components), "window": _window(c.window),
            }
            for i, c in enumerate(report.ceilings)
        ],
        "summary": {
            impl: {"median_binds_per_s": round(report.median_binds_per_s(impl), 1), "median_ratio_to_ceiling": _rounded(report.median_ratio(impl)), "rounds": sum(1 for r in report.runs if r.impl == impl)}
            for impl in impls
        },
        # The first implementation's median binds/s over the second's (--vs).
        "vs": round(report.median_binds_per_s(impls[0]) / report.median_binds_per_s(impls[1]), 3) if len(impls) > 1 and report.median_binds_per_s(impls[1]) > 0 else None,
        "runs": [],
    }
    for run in report.runs:
        ratio = run.ratio(report.ceiling_of(run))
        out["runs"].append({
            "impl": run.impl, "round": run.round, "mode": run.mode, "pods": run.pods, "bound": run.bound, "complete": run.complete, "problem": run.problem,
            "seconds": round(run.seconds, 3), "binds_per_s": round(run.binds_per_s, 1), "ratio_to_ceiling": None if ratio is None else round(ratio, 3),
            "bind_s": {"p50": _rounded(percentile(run.bind_s, 50)), "p99": _rounded(percentile(run.bind_s, 99))},
            "gang_s": {"p50": _rounded(percentile(run.gang_s, 50)), "p99": _rounded(percentile(run.gang_s, 99)), "complete": len(run.gang_s), "partial": run.partial_gangs},
            "create_s": round(run.create_s, 2),
            "components": _usage(run.components),
            "writes": [{"client": w.client, "verb": w.verb, "resource": w.resource, "count": n} for w, n in run.writes],
            "window": _window(run.window),
        })
    return out
