"""`vck diff RUN_A RUN_B`: every scenario whose verdict differs between two runs (say the reference
and a Volcano build), as a text table and as one self-contained page with both sides' checks and
timelines next to each other, so each disagreement can be explained.
"""

from __future__ import annotations

import dataclasses
import html as stdhtml
import pathlib

from conformance import results
from conformance.report import html, json_report

REPORT_FILE = "report.json"


def _e(text: object) -> str:
    return stdhtml.escape(str(text), quote=True)


class DiffError(ValueError):
    """A run could not be found or read; the message says where the kit looked."""


@dataclasses.dataclass(frozen=True)
class Difference:
    id: str
    suite: str
    title: str
    # None when the scenario is not in that run at all.
    a: results.ScenarioResult | None
    b: results.ScenarioResult | None

    @staticmethod
    def verdict(sc: results.ScenarioResult | None) -> str:
        return "absent" if sc is None else sc.status.value


def locate(ref: str, reports_root: pathlib.Path) -> pathlib.Path:
    """The report.json a user means by `ref`: that file, a run folder holding one, or a run id
    (or `latest`) under the reports folder."""
    for candidate in (pathlib.Path(ref), pathlib.Path(ref) / REPORT_FILE, reports_root / ref / REPORT_FILE):
        if candidate.is_file():
            return candidate
    raise DiffError(f"no run {ref!r}: looked for {ref}, {pathlib.Path(ref) / REPORT_FILE} and {reports_root / ref / REPORT_FILE}")


def read(ref: str, reports_root: pathlib.Path) -> results.RunResult:
    path = locate(ref, reports_root)
    try:
        return json_report.read(path)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DiffError(f"{path} is not a vck report: {err.__class__.__name__}: {err}") from err


def differences(a: results.RunResult, b: results.RunResult) -> list[Difference]:
    """Scenarios whose verdict differs, or that only one run has, in suite then id order."""
    left = {sc.id: sc for sc in a.scenarios}
    right = {sc.id: sc for sc in b.scenarios}
    out = []
    for scenario_id in left.keys() | right.keys():
        sa, sb = left.get(scenario_id), right.get(scenario_id)
        if sa is not None and sb is not None and sa.status is sb.status:
            continue
        some = sa or sb
        assert some is not None
        out.append(Difference(scenario_id, some.suite, some.title, sa, sb))
    return sorted(out, key=lambda d: (d.suite, d.id))


def _reason(sc: results.ScenarioResult | None, width: int) -> str:
    if sc is None:
        return "-"
    first = sc.reason.splitlines()[0] if sc.reason else ""
    return first if len(first) <= width else first[: width - 1] + "…"


def text_table(a: results.RunResult, b: results.RunResult, diffs: list[Difference]) -> str:
    name_a, name_b = a.metadata.implementation, b.metadata.implementation
    head = f"{len(diffs)} of {len(set(s.id for s in a.scenarios) | set(s.id for s in b.scenarios))} scenarios differ: A = {name_a} ({a.metadata.run_id}), B = {name_b} ({b.metadata.run_id})"
    if not diffs:
        return head
    width = max(len(d.id) for d in diffs)
    rows = [f"{'scenario':<{width}}  {'A':<11}  {'B':<11}  why (the side that did not pass)"]
    for d in diffs:
        failing = d.b if d.b is not None and d.b.status is not results.Status.PASSED else d.a
        rows.append(f"{d.id:<{width}}  {Difference.verdict(d.a):<11}  {Difference.verdict(d.b):<11}  {_reason(failing, 110)}")
    return "\n".join([head, *rows])


def _side(label: str, run: results.RunResult, sc: results.ScenarioResult | None) -> str:
    title = f"{label}: {_e(run.metadata.implementation)}"
    if sc is None:
        return f'<div class="side"><h4>{title}</h4><p>not in this run</p></div>'
    return (
        f'<div class="side"><h4>{title}: <span class="{sc.status.value}">{sc.status.value.upper()}</span> ({sc.duration_s:.1f}s)</h4>'
        f'<div class="reason">{_e(sc.reason)}</div>{html.details(sc)}</div>'
    )


def render(a: results.RunResult, b: results.RunResult, diffs: list[Difference]) -> str:
    rows = "".join(
        f'<tr><td>{_e(d.suite)}</td><td><a href="#{_e(d.id)}">{_e(d.id)}</a></td>'
        f'<td class="{Difference.verdict(d.a)}">{Difference.verdict(d.a)}</td><td class="{Difference.verdict(d.b)}">{Difference.verdict(d.b)}</td></tr>'
        for d in diffs
    )
    sections = "".join(
        f'<div class="scenario" id="{_e(d.id)}"><h3>{_e(d.suite)}/{_e(d.id)}: {_e(d.title)}</h3>'
        f'<div class="pair">{_side("A", a, d.a)}{_side("B", b, d.b)}</div></div>'
        for d in diffs
    )
    css = html.CSS + ".pair{display:grid;grid-template-columns:1fr 1fr;gap:12px} .side{min-width:0;overflow-x:auto} h4{margin:4px 0;font-size:14px}"
    runs = "".join(
        f"<tr><td>{label}</td><td>{_e(r.metadata.implementation)}</td><td>{_e(r.metadata.run_id)}</td><td>{_e(r.metadata.started_at)}</td><td>{r.metadata.wall_time_s:.0f}s</td></tr>"
        for label, r in (("A", a), ("B", b))
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>vck diff {_e(a.metadata.run_id)} vs {_e(b.metadata.run_id)}</title><style>{css}</style></head><body>'
        f"<h1>Verdicts that differ</h1><table><tr><th></th><th>implementation</th><th>run</th><th>started</th><th>wall time</th></tr>{runs}</table>"
        f'<p>{len(diffs)} scenarios differ.</p><table id="differences"><tr><th>suite</th><th>scenario</th><th>A</th><th>B</th></tr>{rows}</table>'
        f"{sections}</body></html>"
    )
