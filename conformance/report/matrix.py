"""`vck matrix`: several implementations (Volcano releases side by side, the reference beside them)
scored on one selection, as one report: every scenario's verdict per implementation, the verdicts
that change between neighbouring columns first (each linked to a page with both timelines, the
`vck diff` page of that pair), and, when measured, the scheduler bench per implementation (its
section made by the bench, bench/render.py).

matrix.json holds the table (`vck-matrix/v1`); each column's own reports (report.json, junit.xml,
index.html) sit in a folder of its own beside it.
"""

from __future__ import annotations

import dataclasses
import html as stdhtml
from typing import Any, Sequence

from conformance import results
from conformance.report import html

SCHEMA = "vck-matrix/v1"


def _e(text: object) -> str:
    return stdhtml.escape(str(text), quote=True)


@dataclasses.dataclass(frozen=True)
class Column:
    """One implementation's run: its label (the folder its reports are in) and its results."""

    label: str
    run: results.RunResult

    @property
    def implementation(self) -> str:
        return self.run.metadata.implementation

    @property
    def kubernetes(self) -> str:
        return self.run.metadata.versions.get("kubernetes", "?")


@dataclasses.dataclass(frozen=True)
class Row:
    id: str
    suite: str
    title: str
    level: str
    # One verdict per column, in column order (None: the scenario is not in that run).
    verdicts: tuple[str | None, ...]

    def changes(self) -> list[int]:
        """The columns whose verdict differs from the column before (1 means between 0 and 1)."""
        return [i for i in range(1, len(self.verdicts)) if self.verdicts[i] != self.verdicts[i - 1]]


def rows(columns: Sequence[Column]) -> list[Row]:
    """Every scenario of any column: those whose verdict changes between neighbours first, then
    the rest, each group by suite and id."""
    found: dict[str, Row] = {}
    by_column = [{sc.id: sc for sc in col.run.scenarios} for col in columns]
    for table in by_column:
        for sc in table.values():
            if sc.id not in found:
                verdicts = tuple(t[sc.id].status.value if sc.id in t else None for t in by_column)
                found[sc.id] = Row(sc.id, sc.suite, sc.title, sc.level.value, verdicts)
    return sorted(found.values(), key=lambda r: (not r.changes(), r.suite, r.id))


def to_json(columns: Sequence[Column], table: Sequence[Row], bench: dict[str, Any] | None = None, interrupted: str | None = None) -> dict[str, Any]:
    """matrix.json; `bench` is the bench's own bench.json, when one ran; `interrupted` what ended
    the matrix before its last column (None: every column ran)."""
    return {
        "schema": SCHEMA,
        "columns": [
            {"label": c.label, "implementation": c.implementation, "kubernetes": c.kubernetes, "run_id": c.run.metadata.run_id,
             "wall_time_s": c.run.metadata.wall_time_s, "summary": _summary(c.run)}
            for c in columns
        ],
        "scenarios": [{"id": r.id, "suite": r.suite, "level": r.level, "verdicts": list(r.verdicts), "changes_at": r.changes()} for r in table],
        "bench": bench,
        "interrupted": interrupted,
    }


def _summary(run: results.RunResult) -> dict[str, int]:
    counts: dict[str, int] = {}
    for sc in run.scenarios:
        counts[sc.status.value] = counts.get(sc.status.value, 0) + 1
    return counts


def render(columns: Sequence[Column], table: Sequence[Row], pair_pages: Sequence[str], bench_section: str = "") -> str:
    """The page: the columns, the bench per column (its HTML, when one ran), then the table
    (changes first; a change links to the page of that neighbouring pair, where both timelines
    sit side by side)."""
    heads = "".join(f'<th><a href="{_e(c.label)}/index.html">{_e(c.implementation)}</a><br><span class="meta">Kubernetes {_e(c.kubernetes)}</span></th>' for c in columns)
    cells = []
    for row in table:
        tds = []
        for i, verdict in enumerate(row.verdicts):
            shown = verdict or "absent"
            if i in row.changes():
                shown = f'<a href="{_e(pair_pages[i - 1])}#{_e(row.id)}">{_e(shown)}</a>'
            tds.append(f'<td class="{_e(verdict or "absent")}">{shown}</td>')
        mark = "changes" if row.changes() else ""
        cells.append(f'<tr class="{mark}"><td>{_e(row.suite)}</td><td>{_e(row.id)}</td><td>{_e(row.level)}</td>{"".join(tds)}</tr>')
    changed = sum(1 for r in table if r.changes())
    summary = "".join(
        f"<tr><td>{_e(c.implementation)}</td><td>{_e(c.kubernetes)}</td>" + "".join(f"<td>{_summary(c.run).get(s.value, 0)}</td>" for s in results.Status) + f"<td>{c.run.metadata.wall_time_s:.0f}s</td></tr>"
        for c in columns
    )
    status_heads = "".join(f"<th>{s.value}</th>" for s in results.Status)
    css = html.CSS + "tr.changes td{background:#fef9c3} td.absent{color:#9ca3af}"
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>vck matrix</title><style>{css}</style></head><body>'
        f"<h1>Verdicts by implementation</h1>"
        f"<table><tr><th>implementation</th><th>Kubernetes</th>{status_heads}<th>wall time</th></tr>{summary}</table>"
        f"{bench_section}"
        f"<h2>Scenarios</h2><p>{changed} of {len(table)} scenarios change verdict between neighbouring columns (first, highlighted; each change links to both timelines).</p>"
        f'<table id="matrix"><tr><th>suite</th><th>scenario</th><th>level</th>{heads}</tr>{"".join(cells)}</table>'
        "</body></html>"
    )
