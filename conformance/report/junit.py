"""junit.xml: one testcase per scenario (level in the name), for CI systems."""

from __future__ import annotations

import pathlib
import xml.etree.ElementTree as ET

from conformance import results
from conformance.report import score


def _check_lines(sc: results.ScenarioResult, indent: str = "") -> list[str]:
    lines = []
    for check in sc.checks:
        lines.append(f"{indent}{'ok  ' if check.passed else 'FAIL'} {check.description}")
        if not check.passed:
            lines += [f"{indent}     expected: {check.expected}", f"{indent}     observed: {check.observed}"]
    return lines


def _checks_text(sc: results.ScenarioResult) -> str:
    lines = [sc.reason, ""]
    if sc.attempts:
        # Every attempt's own verdict and checks: a FLAKY scenario's evidence is their difference.
        for attempt in sc.attempts:
            lines += [f"attempt {attempt.attempt}: {attempt.status.value.upper()}: {attempt.reason}", *_check_lines(attempt, "  "), ""]
    else:
        lines += _check_lines(sc)
    lines += ["", "cites: " + "; ".join(sc.cites)]
    return "\n".join(lines)


def to_element(run: results.RunResult) -> ET.Element:
    overall = score.tally(run.scenarios)
    total_time = sum(sc.duration_s for sc in run.scenarios)
    meta = run.metadata
    # An interrupted run is one more error: a CI that reads only junit.xml must not see it green.
    interrupted = 1 if meta.interrupted else 0
    suite = ET.Element(
        "testsuite",
        name=f"vck {run.metadata.implementation}",
        tests=str(overall.total + interrupted),
        failures=str(overall.failed + overall.flaky),
        errors=str(overall.error + interrupted),
        skipped=str(overall.not_claimed + overall.not_applicable),
        time=f"{total_time:.3f}",
        timestamp=run.metadata.started_at,
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (("implementation", run.metadata.implementation), ("backend", run.metadata.backend), ("certified", str(score.certified(run)).lower()), ("repeat", str(meta.repeat)), ("flaky", str(overall.flaky))):
        ET.SubElement(props, "property", name=key, value=value)
    if meta.interrupted:
        ET.SubElement(props, "property", name="interrupted", value=meta.interrupted)
        not_run = score.missing(run)
        case = ET.SubElement(suite, "testcase", classname="vck", name="the run", time="0")
        message = f"interrupted by {meta.interrupted}: {not_run} of {meta.selected} selected scenarios have no verdict; not certified"
        ET.SubElement(case, "error", message=message, type="RunInterrupted").text = message
    for sc in run.scenarios:
        case = ET.SubElement(suite, "testcase", classname=sc.suite, name=f"[{sc.level.value}] {sc.id}: {sc.title}", time=f"{sc.duration_s:.3f}", file=sc.path)
        if sc.status is results.Status.FAILED:
            ET.SubElement(case, "failure", message=sc.reason[:500], type="ScenarioFailed").text = _checks_text(sc)
        elif sc.status is results.Status.FLAKY:
            # A failure, never green: a scenario whose verdict depends on the attempt certifies nothing.
            ET.SubElement(case, "failure", message=sc.reason[:500], type="ScenarioFlaky").text = _checks_text(sc)
        elif sc.status is results.Status.ERROR:
            ET.SubElement(case, "error", message=sc.reason[:500], type="KitError").text = _checks_text(sc)
        elif sc.status is results.Status.NOT_CLAIMED:
            ET.SubElement(case, "skipped", message=f"not claimed: {', '.join(sc.missing_capabilities)}")
        elif sc.status is results.Status.NOT_APPLICABLE:
            ET.SubElement(case, "skipped", message=f"not applicable: {sc.reason}")
    return suite


def write(run: results.RunResult, path: pathlib.Path) -> None:
    root = ET.Element("testsuites")
    root.append(to_element(run))
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
