"""An inline SVG of pods on nodes over time, built from a scenario's timeline."""

from __future__ import annotations

import dataclasses
import html
from typing import Sequence

from conformance import results

LANE_H = 22
LEFT = 130
WIDTH = 900
COLORS = {"Running": "#3b82f6", "Succeeded": "#16a34a", "Failed": "#dc2626", "Deleted": "#9ca3af", "Pending": "#f59e0b"}


@dataclasses.dataclass
class Bar:
    pod: str
    node: str
    start: float
    end: float | None = None
    last_phase: str = "Running"


def bars(timeline: Sequence[results.TimelineEntry]) -> list[Bar]:
    """One bar per pod placement: from when it was seen bound to a node until it ended or went."""
    open_bars: dict[str, Bar] = {}
    done: list[Bar] = []
    for entry in timeline:
        if entry.kind != "Pod":
            continue
        key = f"{entry.namespace}/{entry.name}"
        node = entry.summary.get("node")
        phase = entry.summary.get("phase") or "Pending"
        current = open_bars.get(key)
        if entry.event == "DELETED":
            if current is not None:
                current.end = entry.t_s
                if current.last_phase == "Running":
                    current.last_phase = "Deleted"
                done.append(open_bars.pop(key))
            continue
        if node and current is None:
            current = open_bars[key] = Bar(entry.name, node, entry.t_s)
        if current is not None:
            current.last_phase = phase
            if phase in ("Succeeded", "Failed") and current.end is None:
                current.end = entry.t_s
    return done + list(open_bars.values())


def svg(timeline: Sequence[results.TimelineEntry], end_s: float) -> str:
    placed = bars(timeline)
    if not placed:
        return ""
    nodes = sorted({b.node for b in placed})
    span = max([end_s, *[b.end or 0 for b in placed], *[b.start for b in placed], 1.0])
    scale = (WIDTH - LEFT - 10) / span
    height = LANE_H * len(nodes) + 40
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img" aria-label="pods on nodes over time">']
    for i, node in enumerate(nodes):
        y: float = 10 + i * LANE_H
        parts.append(f'<text x="4" y="{y + 15}" font-size="12">{html.escape(node)}</text>')
        parts.append(f'<line x1="{LEFT}" y1="{y + LANE_H}" x2="{WIDTH - 10}" y2="{y + LANE_H}" stroke="#e5e7eb"/>')
    # Several pods on one node share its lane: each gets a thin slice of it.
    per_node: dict[str, list[Bar]] = {}
    for bar in placed:
        per_node.setdefault(bar.node, []).append(bar)
    for node, node_bars in per_node.items():
        lane = nodes.index(node)
        slice_h = max(3.0, (LANE_H - 4) / len(node_bars))
        for j, bar in enumerate(node_bars):
            x = LEFT + bar.start * scale
            w = max(2.0, ((bar.end if bar.end is not None else span) - bar.start) * scale)
            y = 12 + lane * LANE_H + j * slice_h
            color = COLORS.get(bar.last_phase, "#6b7280")
            title = f"{bar.pod} on {bar.node}: {bar.start:.1f}s - {'end' if bar.end is None else f'{bar.end:.1f}s'} ({bar.last_phase})"
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{slice_h - 1:.1f}" fill="{color}"><title>{html.escape(title)}</title></rect>')
            if w > 70 and slice_h >= 12:
                parts.append(f'<text x="{x + 3:.1f}" y="{y + slice_h - 3:.1f}" font-size="10" fill="white">{html.escape(bar.pod)}</text>')
    axis_y = 10 + len(nodes) * LANE_H + 14
    for k in range(6):
        t = span * k / 5
        anchor = "start" if k == 0 else "end" if k == 5 else "middle"
        parts.append(f'<text x="{LEFT + t * scale:.1f}" y="{axis_y}" font-size="10" text-anchor="{anchor}">{t:.0f}s</text>')
    legend_x = LEFT
    for phase, color in COLORS.items():
        parts.append(f'<rect x="{legend_x}" y="{axis_y + 6}" width="10" height="10" fill="{color}"/><text x="{legend_x + 14}" y="{axis_y + 15}" font-size="10">{phase}</text>')
        legend_x += 90
    parts.append("</svg>")
    return "".join(parts).replace(f'height="{height}"', f'height="{axis_y + 24}"', 1)
