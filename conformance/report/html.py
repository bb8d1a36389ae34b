"""index.html: one self-contained page (inline CSS and SVG, no scripts, no external resources).

Summary first, then the per-suite table, then every failure and error with its checks (expected
versus observed), its chart of pods on nodes and its timeline, then the passed and not-claimed ones.
"""

from __future__ import annotations

import html
import pathlib
from typing import Iterable

from conformance import results
from conformance.report import chart, score

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#111827;max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin-top:32px} h3{font-size:15px;margin:0}
.meta{color:#4b5563;font-size:13px}
#summary{border-radius:10px;padding:18px 22px;margin:18px 0;font-size:18px}
#summary.ok{background:#dcfce7;border:2px solid #16a34a} #summary.bad{background:#fee2e2;border:2px solid #dc2626}
#summary .verdict{font-size:30px;font-weight:700;display:block;margin-bottom:6px}
table{border-collapse:collapse;font-size:13px;margin:8px 0} th,td{border:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f4f6}
.passed{color:#15803d;font-weight:600} .failed{color:#b91c1c;font-weight:600} .error{color:#9a3412;font-weight:600} .not-claimed{color:#6b7280;font-weight:600} .not-applicable{color:#6b7280;font-weight:600} .flaky{color:#7e22ce;font-weight:600}
.attempts{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:10px;margin-top:8px} .attempt{border:1px solid #e5e7eb;border-radius:6px;padding:8px;overflow-x:auto}
.scenario{border:1px solid #e5e7eb;border-radius:8px;padding:12px 14px;margin:12px 0}
.reason{margin:6px 0;white-space:pre-wrap} .cites{color:#4b5563;font-size:12px}
td.obs,td.exp{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap}
details{margin-top:8px} summary{cursor:pointer;color:#1d4ed8}
.mono{font-family:ui-monospace,monospace;font-size:12px}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _summary(run: results.RunResult) -> str:
    overall = score.tally(run.scenarios)
    ok = score.certified(run)
    verdict = "CERTIFIED" if ok else "NOT CERTIFIED"
    if run.metadata.interrupted:
        verdict += f" (INTERRUPTED by {run.metadata.interrupted}: {score.missing(run)} of {run.metadata.selected} scenarios did not run)"
    return (
        f'<div id="summary" class="{"ok" if ok else "bad"}"><span class="verdict">{_e(verdict)}</span>'
        f"{_e(run.metadata.implementation)} on {_e(run.metadata.backend)}: "
        f'<span class="passed">{overall.passed} passed</span>, <span class="failed">{overall.failed} failed</span>, '
        f'<span class="not-claimed">{overall.not_claimed} not claimed</span>, <span class="error">{overall.error} error</span>'
        f'{f", <span class=flaky>{overall.flaky} flaky</span>" if overall.flaky else ""}'
        f'{f", <span class=not-applicable>{overall.not_applicable} not applicable</span>" if overall.not_applicable else ""}; '
        f"MUST {overall.must_passed}/{overall.must_claimed}; score {_pct(overall.score)}</div>"
    )


def _suites(run: results.RunResult) -> str:
    rows = "".join(
        f"<tr><td>{_e(name)}</td><td>{t.passed}</td><td>{t.failed}</td><td>{t.flaky}</td><td>{t.not_claimed}</td><td>{t.error}</td><td>{t.must_passed}/{t.must_claimed}</td><td>{_pct(t.score)}</td></tr>"
        for name, t in score.by_suite(run).items()
    )
    return f'<table id="suites"><tr><th>suite</th><th>passed</th><th>failed</th><th>flaky</th><th>not claimed</th><th>error</th><th>MUST passed</th><th>score</th></tr>{rows}</table>'


def _checks(sc: results.ScenarioResult) -> str:
    if not sc.checks:
        return ""
    rows = "".join(
        f'<tr><td class="{"passed" if c.passed else "failed"}">{"ok" if c.passed else "FAIL"}</td><td>{_e(c.description)}</td>'
        f'<td class="exp">{_e(c.expected)}</td><td class="obs">{_e(c.observed)}</td><td>{c.at_s:.1f}s</td></tr>'
        for c in sc.checks
    )
    return f"<table><tr><th></th><th>check</th><th>expected</th><th>observed</th><th>at</th></tr>{rows}</table>"


def _timeline(sc: results.ScenarioResult) -> str:
    if not sc.timeline:
        return ""
    rows = "".join(
        f'<tr><td>{e.t_s:.2f}s</td><td>{_e(e.event)}</td><td>{_e(e.kind)}</td><td>{_e(e.name)}</td>'
        f'<td class="mono">{_e(", ".join(f"{k}={v}" for k, v in e.summary.items() if v not in (None, [], "")))}</td></tr>'
        for e in sc.timeline
    )
    return f"<details><summary>timeline ({len(sc.timeline)} entries)</summary><table><tr><th>t</th><th>event</th><th>kind</th><th>name</th><th>summary</th></tr>{rows}</table></details>"


def _figures(sc: results.ScenarioResult) -> str:
    if not sc.figures:
        return ""
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{v:g}</td></tr>" for k, v in sc.figures.items())
    return f'<table class="figures"><tr><th>figure</th><th>value</th></tr>{rows}</table>'


def _all_figures(run: results.RunResult) -> str:
    """Every scenario's figures in one table near the top: a reader compares them without opening
    each scenario (fragmentation with a plugin off and on, placements by supernode)."""
    rows = "".join(
        f'<tr><td>{_e(sc.suite)}</td><td><a href="#{_e(sc.id)}">{_e(sc.id)}</a></td><td>{_e(name)}</td><td>{value:g}</td></tr>'
        for sc in run.scenarios
        for name, value in sc.figures.items()
    )
    if not rows:
        return ""
    return f'<h2>Figures</h2><table id="figures"><tr><th>suite</th><th>scenario</th><th>figure</th><th>value</th></tr>{rows}</table>'


def details(sc: results.ScenarioResult) -> str:
    """A scenario's checks, figures, chart of pods on nodes and timeline (also used by `vck diff`)."""
    drawn = chart.svg(sc.timeline, sc.duration_s)
    return _checks(sc) + _figures(sc) + (f"<div>{drawn}</div>" if drawn else "") + _timeline(sc)


def _attempts(sc: results.ScenarioResult) -> str:
    """A repeated scenario's attempts side by side, each with its verdict, checks and timeline."""
    columns = "".join(
        f'<div class="attempt"><h4>attempt {a.attempt}: <span class="{a.status.value}">{a.status.value.upper()}</span> <span class="meta">({a.duration_s:.1f}s)</span></h4>'
        f'<div class="reason">{_e(a.reason)}</div>{details(a)}</div>'
        for a in sc.attempts
    )
    return f'<div class="attempts">{columns}</div>'


def _scenario(sc: results.ScenarioResult, full: bool) -> str:
    repeated = f", {len(sc.attempts)} attempts" if sc.attempts else ""
    kit = f", kit {sc.overhead_s:.1f}s" if sc.phases_s and not sc.attempts else ""
    head = f'<h3><span class="{sc.status.value}">{sc.status.value.upper()}</span> [{sc.level.value}] {_e(sc.suite)}/{_e(sc.id)}: {_e(sc.title)} <span class="meta">({sc.duration_s:.1f}s{kit}{repeated})</span></h3>'
    body = f'<div class="reason">{_e(sc.reason)}</div><div class="cites">cites: {_e("; ".join(sc.cites))}</div>'
    evidence = _attempts(sc) if sc.attempts else details(sc)
    body += evidence if full else f"<details><summary>checks and timeline</summary>{evidence}</details>"
    return f'<div class="scenario" id="{_e(sc.id)}">{head}{body}</div>'


def _section(title: str, items: Iterable[results.ScenarioResult], full: bool) -> str:
    rendered = "".join(_scenario(sc, full) for sc in items)
    return f"<h2>{_e(title)}</h2>{rendered}" if rendered else ""


def _conditions(meta: results.RunMetadata) -> str:
    """How the run was made: repeats, busy processes beside it, and the kit's setup time."""
    parts = []
    if meta.repeat > 1:
        parts.append(f"every scenario ran {meta.repeat} times (a scenario whose attempts differ is FLAKY)")
    if meta.stress:
        parts.append(f"{meta.stress} busy CPU process{'es' if meta.stress != 1 else ''} ran beside it (--stress)")
    if meta.setup_s:
        parts.append("setup, the kit's own time before scenarios (never charged to one): " + ", ".join(f"{k} {v:.1f}s" for k, v in meta.setup_s.items()))
    return "".join(f"<br>{_e(p)}" for p in parts)


def render(run: results.RunResult) -> str:
    meta = run.metadata
    versions = ", ".join(f"{k} {v}" for k, v in meta.versions.items())
    flaky = [sc for sc in run.scenarios if sc.status is results.Status.FLAKY]
    bad = [sc for sc in run.scenarios if sc.status in (results.Status.FAILED, results.Status.ERROR)]
    good = [sc for sc in run.scenarios if sc.status is results.Status.PASSED]
    unclaimed = [sc for sc in run.scenarios if sc.status is results.Status.NOT_CLAIMED]
    elsewhere = [sc for sc in run.scenarios if sc.status is results.Status.NOT_APPLICABLE]
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>vck report {_e(meta.run_id)}</title><style>{CSS}</style></head><body>'
        f"<h1>Volcano conformance report</h1>"
        f'<div class="meta">run {_e(meta.run_id)} started {_e(meta.started_at)}, wall time {meta.wall_time_s:.0f}s, time scale {meta.time_scale:g}<br>'
        f"versions: {_e(versions)}<br>command: <span class=\"mono\">{_e(meta.command)}</span><br>"
        f'{meta.workers} worker{"s" if meta.workers != 1 else ""}; the implementation\'s logs, one folder per worker: <a href="logs/">logs/</a>'
        f"{_conditions(meta)}</div>"
        f"{_summary(run)}<h2>Suites</h2>{_suites(run)}{_all_figures(run)}"
        f"{_section('Flaky: attempts that ended differently', flaky, True)}{_section('Failures and errors', bad, True)}{_section('Passed', good, False)}{_section('Not claimed', unclaimed, False)}{_section('Not applicable: for other Volcano releases', elsewhere, False)}"
        "</body></html>"
    )


def write(run: results.RunResult, path: pathlib.Path) -> None:
    path.write_text(render(run), encoding="utf-8")
