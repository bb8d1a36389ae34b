"""The bench's report as text (the command's output) and as a page with a chart (index.html)."""

from __future__ import annotations

import html
import math
from typing import Sequence

from conformance.bench import figures, usage

# Components in the order the tables list them; others follow by name.
ORDER = ("scheduler", "controller", "webhook", "kube-apiserver", "etcd", "kwok", "kube-controller-manager", "bench client")
COLOURS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df")


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}s"


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{v:.2f}" for v in load)


def _components(items: Sequence[usage.Usage]) -> dict[str, usage.Usage]:
    return {u.component: u for u in items}


def component_names(report: figures.Report) -> list[str]:
    seen = {u.component for run in report.runs for u in run.components} | {u.component for c in report.ceilings for u in c.components}
    seen.discard("chaos supervisor")
    return [c for c in ORDER if c in seen] + sorted(seen - set(ORDER))


def headline(report: figures.Report) -> str:
    rate = f", arriving at {report.rate:g} pods/s" if report.rate else ""
    rounds = f", {len(report.ceilings)} rounds" if len(report.ceilings) > 1 else ""
    return f"{report.mode}: {report.nodes} nodes, {report.pods} pods in gangs of {report.gang} ({report.workload}{rate}{rounds})"


def _ceiling_line(i: int, ceiling: figures.Ceiling, rounds: int) -> str:
    label = f"ceiling (no scheduler{f', round {i + 1}' if rounds > 1 else ''})"
    failed = f", {ceiling.failed} requests failed" if ceiling.failed else ""
    return f"{label}: {ceiling.creates_per_s:.1f} creates/s, {ceiling.binds_per_s:.1f} binds/s{failed}; load average {_load(ceiling.window.load_start)} -> {_load(ceiling.window.load_end)}"


def _label(run: figures.Run, rounds: int) -> str:
    return f"{run.impl} #{run.round + 1}" if rounds > 1 else run.impl


def text(report: figures.Report) -> str:
    rounds = len(report.ceilings)
    lines = [headline(report)] + [_ceiling_line(i, c, rounds) for i, c in enumerate(report.ceilings)]
    header = f"{'implementation':<26} {'bound':>13} {'binds/s':>8} {'x ceil':>7} {'bind p50':>9} {'bind p99':>9} {'gang p50':>9} {'gang p99':>9} {'partial':>7}  load average (start -> end)"
    lines += ["", header]
    for run in report.runs:
        ratio = run.ratio(report.ceiling_of(run))
        lines.append(
            f"{_label(run, rounds):<26} {f'{run.bound}/{run.pods}':>13} {run.binds_per_s:>8.1f} {'n/a' if ratio is None else f'{ratio:.2f}':>7} "
            f"{_s(figures.percentile(run.bind_s, 50)):>9} {_s(figures.percentile(run.bind_s, 99)):>9} "
            f"{_s(figures.percentile(run.gang_s, 50)):>9} {_s(figures.percentile(run.gang_s, 99)):>9} {run.partial_gangs:>7}  "
            f"{_load(run.window.load_start)} -> {_load(run.window.load_end)}"
        )
    impls = report.impls()
    if rounds > 1 or len(impls) > 1:
        lines.append("")
        for impl in impls:
            ratio = report.median_ratio(impl)
            lines.append(f"{impl}: median {report.median_binds_per_s(impl):.1f} binds/s, {'n/a' if ratio is None else f'{ratio:.2f}'} x its round's ceiling")
        if len(impls) > 1 and report.median_binds_per_s(impls[1]) > 0:
            lines.append(f"{impls[0]} / {impls[1]}: {report.median_binds_per_s(impls[0]) / report.median_binds_per_s(impls[1]):.2f} x the binds/s")
    names = component_names(report)
    lines += ["", "CPU seconds / peak RSS MiB of each component over the window:", f"{'':<26} " + " ".join(f"{n:>16}" for n in names)]
    rows = [(f"ceiling{f' #{i + 1}' if rounds > 1 else ''}", c.components) for i, c in enumerate(report.ceilings)]
    rows += [(_label(run, rounds), run.components) for run in report.runs]
    for label, items in rows:
        by = _components(items)
        cells = []
        for name in names:
            u = by.get(name)
            cells.append("-" if u is None else (f"{u.cpu_s:.1f}" if u.rss_peak_bytes == 0 else f"{u.cpu_s:.1f}/{u.rss_peak_bytes / 2**20:.0f}"))
        lines.append(f"{label:<26} " + " ".join(f"{c:>16}" for c in cells))
    for run in report.runs:
        if run.bound:
            top = ", ".join(f"{w.client} {w.verb} {w.resource} {n / run.bound:.2f}" for w, n in run.writes[:8])
            lines.append(f"API writes per bound pod, {_label(run, rounds)}: {top}")
    for run in report.runs:
        if run.problem:
            lines.append(f"{_label(run, rounds)}: {run.problem.splitlines()[0]}")
    return "\n".join(lines)


def _nice_step(span: float) -> float:
    raw = span / 5 if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def _curve(times: Sequence[float], limit: int = 400) -> list[tuple[float, int]]:
    """(seconds, pods bound by then), at most `limit` points."""
    ordered = sorted(times)
    step = max(1, len(ordered) // limit)
    points = [(0.0, 0)] + [(ordered[i], i + 1) for i in range(0, len(ordered), step)]
    if ordered and points[-1][1] != len(ordered):
        points.append((ordered[-1], len(ordered)))
    return points


def chart(report: figures.Report, width: int = 760, height: int = 360) -> str:
    """An SVG of pods bound over time since the start, one line per run and the ceiling's binds."""
    rounds = len(report.ceilings)
    series: list[tuple[str, list[tuple[float, int]], str, bool]] = []
    for i, ceiling in enumerate(report.ceilings):
        series.append((f"ceiling{f' #{i + 1}' if rounds > 1 else ''} (binds, no scheduler)", _curve(ceiling.bind_times_s), "#6e7781", True))
    impls = report.impls()
    for run in report.runs:
        series.append((_label(run, rounds), _curve(run.bound_times_s), COLOURS[impls.index(run.impl) % len(COLOURS)], False))
    left, right, top, bottom = 60, 20, 20, 40
    max_x = max((p[-1][0] for _, p, _, _ in series if p), default=1.0) or 1.0
    max_y = max((p[-1][1] for _, p, _, _ in series if p), default=1) or 1
    sx = (width - left - right) / max_x
    sy = (height - top - bottom) / max_y
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">']
    step_x, step_y = _nice_step(max_x), _nice_step(max_y)
    x = 0.0
    while x <= max_x + 1e-9:
        px = left + x * sx
        out.append(f'<line x1="{px:.1f}" y1="{top}" x2="{px:.1f}" y2="{height - bottom}" stroke="#eee"/><text x="{px:.1f}" y="{height - bottom + 14}" text-anchor="middle">{x:g}</text>')
        x += step_x
    y = 0.0
    while y <= max_y + 1e-9:
        py = height - bottom - y * sy
        out.append(f'<line x1="{left}" y1="{py:.1f}" x2="{width - right}" y2="{py:.1f}" stroke="#eee"/><text x="{left - 6}" y="{py + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += step_y
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 6}" text-anchor="middle">seconds since the start</text>')
    out.append(f'<text x="14" y="{(top + height - bottom) / 2}" text-anchor="middle" transform="rotate(-90 14 {(top + height - bottom) / 2})">pods bound</text>')
    for i, (label, points, colour, dashed) in enumerate(series):
        path = " ".join(f"{left + px * sx:.1f},{height - bottom - py * sy:.1f}" for px, py in points)
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{path}"/>')
        out.append(f'<text x="{left + 10}" y="{top + 14 + 14 * i}" fill="{colour}">{html.escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def page(report: figures.Report) -> str:
    title = html.escape(f"vck bench scheduler: {headline(report)}")
    return (
        f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title>"
        "<style>body{font-family:sans-serif;margin:2em}pre{background:#f6f8fa;padding:1em;overflow-x:auto}</style></head><body>"
        f"<h1>{title}</h1>\n{chart(report)}\n<pre>{html.escape(text(report))}</pre>"
        "<p>Times are the API server's (its audit log); bench.json beside this page holds every figure.</p></body></html>\n"
    )


def matrix_section(report: figures.Report) -> str:
    """The bench's part of `vck matrix`'s page: one row per implementation."""
    data = figures.to_json(report)
    rows = "".join(
        f"<tr><td>{html.escape(str(r['impl']))}</td><td>{r['binds_per_s']}</td><td>{r['ratio_to_ceiling']}</td><td>{r['bind_s']['p50']} / {r['bind_s']['p99']}</td>"
        f"<td>{r['gang_s']['p50']} / {r['gang_s']['p99']}</td><td>{html.escape(str(_scheduler_usage(r['components'])))}</td></tr>"
        for r in data["runs"]
    )
    return (
        f"<h2>Scheduler bench</h2><p>{report.nodes} nodes, {report.pods} pods in gangs of {report.gang}, {html.escape(str(report.mode))}; "
        f"ceiling {', '.join(str(c['binds_per_s']) for c in data['ceilings'])} binds/s</p>"
        f"<table><tr><th>implementation</th><th>binds/s</th><th>of the ceiling</th><th>time to bind p50 / p99 (s)</th><th>time to whole gang p50 / p99 (s)</th><th>scheduler CPU s / peak MiB</th></tr>{rows}</table>"
    )


def _scheduler_usage(components: dict[str, dict[str, float]]) -> str:
    """The scheduler process's CPU seconds and peak memory in one bench run."""
    found = [(name, u) for name, u in components.items() if "scheduler" in name]
    return ", ".join(f"{u['cpu_s']:.1f} / {u['rss_peak_mib']:.0f}" for _, u in found) or "-"
