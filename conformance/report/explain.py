"""A scenario that did not pass, explained where its author is (the terminal): the verdict and why,
then for each failed check what was expected and what was observed, and the slice of the timeline
that leads up to it: the changes to the kinds of object the check looked at, and the steps, until
the moment it was judged. The HTML report's evidence, compact (`vck explain RUN ID`, and each
failure of a `vck run --dev`)."""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from conformance import results

# The timeline entries shown before a failed check's moment (the last ones: the state it judged).
SLICE_ENTRIES = 10
# Entries this long after the check's moment still show (a change that came just too late).
AFTER_S = 1.0
# A summary value is cut to this many characters (a message, a long list of conditions).
VALUE_CHARS = 80


@dataclasses.dataclass(frozen=True)
class Options:
    # Every check, the passed ones too (one line each), not only the failed.
    all_checks: bool = False
    entries: int = SLICE_ENTRIES


def needs_explaining(sc: results.ScenarioResult) -> bool:
    return sc.status in (results.Status.FAILED, results.Status.ERROR, results.Status.FLAKY)


def text(sc: results.ScenarioResult, options: Options = Options()) -> str:
    """The scenario's verdict and its failed checks with their evidence; a repeated scenario's
    attempts that did not pass, each in turn."""
    lines = [f"{sc.status.value.upper()} [{sc.level.value}] {sc.suite}/{sc.id}: {sc.title}", f"  file: {sc.path}"]
    lines += [f"  {line}" for line in _reason_lines(sc.reason)]
    if sc.attempts:
        for attempt in sc.attempts:
            lines.append(f"  attempt {attempt.attempt}: {attempt.status.value}")
            if attempt.status is not results.Status.PASSED:
                lines += [f"    {line}" for line in _checks(attempt, options)]
        return "\n".join(lines)
    lines += _checks(sc, options)
    if sc.cites:
        lines.append(f"  cites: {'; '.join(sc.cites)}")
    return "\n".join(lines)


def _reason_lines(reason: str) -> list[str]:
    first, *rest = reason.splitlines() or [""]
    return [f"reason: {first}", *rest]


def _checks(sc: results.ScenarioResult, options: Options) -> list[str]:
    lines = []
    for number, check in enumerate(sc.checks, 1):
        if check.passed:
            if options.all_checks:
                lines.append(f"  ok   {number}. {check.description} (at {check.at_s:.1f}s)")
            continue
        lines.append(f"  FAIL {number}. {check.description} (at {check.at_s:.1f}s)")
        lines.append(f"       expected: {check.expected}")
        lines.append(f"       observed: {check.observed}")
        shown = timeline_slice(sc.timeline, check, options.entries)
        if shown:
            kinds = ", ".join(check.looked_at) or "every kind"
            lines.append(f"       timeline ({kinds}, and the steps) up to {check.at_s + AFTER_S:.1f}s:")
            lines += [f"         {entry_line(e)}" for e in shown]
        elif sc.timeline:
            lines.append(f"       timeline: nothing of {', '.join(check.looked_at) or 'any kind'} changed before {check.at_s:.1f}s")
    return lines


def timeline_slice(timeline: Sequence[results.TimelineEntry], check: results.Check, entries: int = SLICE_ENTRIES) -> list[results.TimelineEntry]:
    """The last `entries` changes to the kinds the check looked at (and the steps) up to just after
    it was judged: the state it judged and what led there."""
    kinds = set(check.looked_at)
    relevant = [e for e in timeline if e.t_s <= check.at_s + AFTER_S and (e.event == "STEP" or not kinds or e.kind in kinds)][-entries:]
    # Steps alone explain nothing: a slice of only steps is none.
    return relevant if any(e.event != "STEP" for e in relevant) else []


def entry_line(entry: results.TimelineEntry) -> str:
    # Every namespaced object is the scenario's own namespace's: the name says enough.
    what = "step" if entry.event == "STEP" else f"{entry.event:<8} {entry.kind}"
    return f"{entry.t_s:6.1f}s {what} {entry.name}" + (f"  {summary_text(entry.summary)}" if entry.summary else "")


def summary_text(summary: dict[str, object]) -> str:
    return " ".join(f"{key}={_short(value)}" for key, value in summary.items() if value not in (None, [], "", {}))


def _short(value: object) -> str:
    shown = str(value)
    return shown if len(shown) <= VALUE_CHARS else shown[: VALUE_CHARS - 1] + "…"


def run_text(run: results.RunResult, ids: Iterable[str] = (), options: Options = Options()) -> str:
    """Every scenario of the run that did not pass (or those `ids` name, whatever their verdict),
    explained; a line saying so when there is none."""
    wanted = set(ids)
    chosen = [sc for sc in run.scenarios if (sc.id in wanted if wanted else needs_explaining(sc))]
    if not chosen:
        return f"run {run.metadata.run_id}: every scenario passed or was not judged; nothing to explain" if not wanted else ""
    return "\n\n".join(text(sc, options) for sc in chosen)
