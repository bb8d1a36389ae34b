"""report.json: the whole result tree, schema `vck-report/v1` (documented in docs/report.md).

`from_dict` reverses `to_dict` exactly, so reports can be re-read (to re-render, to diff runs).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Mapping

from conformance import results
from conformance.report import score

SCHEMA = "vck-report/v1"


def _tally(t: results.Tally) -> dict[str, Any]:
    return {**dataclasses.asdict(t), "total": t.total}


def scenario_to_dict(sc: results.ScenarioResult) -> dict[str, Any]:
    out = dataclasses.asdict(dataclasses.replace(sc, attempts=()))
    out["level"] = sc.level.value
    out["status"] = sc.status.value
    out["cites"] = list(sc.cites)
    out["requires"] = list(sc.requires)
    out["missing_capabilities"] = list(sc.missing_capabilities)
    out["checks"] = [{**check, "looked_at": list(check["looked_at"])} for check in out["checks"]]
    out["timeline"] = list(out["timeline"])
    out["attempts"] = [scenario_to_dict(a) for a in sc.attempts]
    return out


def scenario_from_dict(d: Mapping[str, Any]) -> results.ScenarioResult:
    return results.ScenarioResult(
        id=d["id"],
        suite=d["suite"],
        title=d["title"],
        level=results.Level(d["level"]),
        cites=tuple(d["cites"]),
        requires=tuple(d["requires"]),
        path=d["path"],
        status=results.Status(d["status"]),
        reason=d["reason"],
        duration_s=d["duration_s"],
        checks=tuple(results.Check(**{**c, "looked_at": tuple(c.get("looked_at", ()))}) for c in d.get("checks", ())),
        timeline=tuple(results.TimelineEntry(**t) for t in d.get("timeline", ())),
        missing_capabilities=tuple(d.get("missing_capabilities", ())),
        figures=dict(d.get("figures", {})),
        phases_s=dict(d.get("phases_s", {})),
        attempt=int(d.get("attempt", 1)),
        attempts=tuple(scenario_from_dict(a) for a in d.get("attempts", ())),
    )


def to_dict(run: results.RunResult) -> dict[str, Any]:
    overall = score.tally(run.scenarios)
    return {
        "schema": SCHEMA,
        "run": dataclasses.asdict(run.metadata),
        "summary": {**_tally(overall), "certified": score.certified(run), "not_run": score.missing(run)},
        "suites": {name: _tally(t) for name, t in score.by_suite(run).items()},
        "scenarios": [scenario_to_dict(sc) for sc in run.scenarios],
    }


def from_dict(d: Mapping[str, Any]) -> results.RunResult:
    if d.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} report (schema: {d.get('schema')!r})")
    return results.RunResult(results.RunMetadata(**d["run"]), tuple(scenario_from_dict(s) for s in d["scenarios"]))


def write(run: results.RunResult, path: pathlib.Path) -> None:
    path.write_text(json.dumps(to_dict(run), indent=1, default=str) + "\n")


def read(path: pathlib.Path) -> results.RunResult:
    return from_dict(json.loads(path.read_text()))


def durations(path: pathlib.Path) -> dict[str, float]:
    """Each scenario's duration in an earlier run's report.json, by id ({} when there is none or
    it cannot be read): the hints that put the longest scenarios first in a run."""
    try:
        data = json.loads(path.read_text())
        return {str(s["id"]): float(s["duration_s"]) for s in data["scenarios"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
