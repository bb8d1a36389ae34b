"""`vck matrix IMPL,IMPL,...`: the same selection run against several implementations one after
another (each Volcano release on the Kubernetes minor it was built for, unless a --kube-version
is given), then one report: a scenario-by-implementation table with the verdicts that change
between neighbouring columns first, a page per neighbouring pair with both timelines (the
`vck diff` page), each column's own reports, and optionally the scheduler bench per column on
the same cluster shape."""

from __future__ import annotations

import copy
import dataclasses
import json
import pathlib
import re
from typing import Callable, Sequence

from conformance import config as run_config
from conformance import interrupts
from conformance.api import run as runs
from conformance.bench import figures as bench_figures
from conformance.bench import render as bench_render
from conformance.bench import scheduler as bench
from conformance.impl import registry as impl_registry
from conformance.report import diff, matrix


@dataclasses.dataclass
class MatrixConfig:
    implementations: Sequence[str]
    # What every column runs (scenarios, suites, -k, backend, jobs...): its implementation, run id
    # and reports folder are the matrix's.
    run: run_config.RunConfig = dataclasses.field(default_factory=run_config.RunConfig)
    matrix_id: str | None = None
    # The scheduler bench per column, on a cluster of this shape (None: no bench).
    bench: bench.BenchConfig | None = None

    def validate(self) -> list[str]:
        problems = []
        if len(self.implementations) < 2:
            problems.append("vck matrix compares implementations: give two or more (volcano:v1.13.3,volcano:v1.15.1,reference)")
        for spec in self.implementations:
            try:
                impl_registry.implementation(spec)
            except Exception as err:
                problems.append(str(err))
        if self.run.reports is None:
            problems.append("vck matrix writes reports: give --reports")
        if self.bench is not None:
            problems += [f"--bench: {p}" for p in self.bench.validate()]
        return problems + self.run.validate()


@dataclasses.dataclass(frozen=True)
class MatrixOutcome:
    folder: pathlib.Path
    columns: tuple[matrix.Column, ...]
    rows: tuple[matrix.Row, ...]
    bench: bench_figures.Report | None
    # Columns whose run wrote no report (interrupted before any verdict, refused...).
    missing: tuple[str, ...]
    # What ended the matrix early (Ctrl-C, a CI cancel): the columns after it never ran and there
    # is no bench; None when every column ran.
    interrupted: str | None = None


def label(spec: str) -> str:
    """A column's folder name: the implementation, with what a path cannot hold made dashes."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-")


def run_matrix(config: MatrixConfig, progress: Callable[[str], None]) -> MatrixOutcome:
    matrix_id = config.matrix_id or f"matrix-{runs.new_run_id()}"
    assert config.run.reports is not None
    folder = config.run.reports / matrix_id
    columns: list[matrix.Column] = []
    missing: list[str] = []
    stopped: str | None = None
    for done, spec in enumerate(config.implementations, start=1):
        progress(f"matrix: {spec}")
        column = copy.copy(config.run)
        column.implementation, column.run_id, column.reports = spec, label(spec), folder
        column.backend = dataclasses.replace(config.run.backend)
        outcome = runs.run(column, progress)
        if outcome.run is None:
            missing.append(spec)
        else:
            columns.append(matrix.Column(label(spec), outcome.run))
        if interrupts.RECORD.received is not None:
            # A signal ends the matrix, not only the column it came in: the column's run took it
            # as its own interruption and returned.
            left = config.implementations[done:]
            stopped = f"{interrupts.RECORD.describe()} during {spec}" + (f"; not run: {', '.join(left)}" if left else "")
            progress(f"matrix: {stopped}")
            break
    report = None
    if config.bench is not None and stopped is None:
        first, *rest = config.implementations
        report = bench.run(dataclasses.replace(config.bench, impl=first, vs=None, more=tuple(rest), out=folder / "bench"), progress)
    table = matrix.rows(columns)
    pages = []
    for i in range(1, len(columns)):
        before, after = columns[i - 1], columns[i]
        page = f"diff-{before.label}-vs-{after.label}.html"
        (folder / page).write_text(diff.render(before.run, after.run, diff.differences(before.run, after.run)), encoding="utf-8")
        pages.append(page)
    bench_json = bench_figures.to_json(report) if report is not None else None
    (folder / "matrix.json").write_text(json.dumps(matrix.to_json(columns, table, bench_json, stopped), indent=1) + "\n")
    (folder / "index.html").write_text(matrix.render(columns, table, pages, bench_render.matrix_section(report) if report is not None else ""), encoding="utf-8")
    return MatrixOutcome(folder, tuple(columns), tuple(table), report, tuple(missing), stopped)
