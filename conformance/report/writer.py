"""Write a run's three reports into `reports/<run-id>/` and point `reports/latest` at it (only a
run that ran to the end: an interrupted one keeps what it judged, and `latest` keeps pointing at
the last whole run)."""

from __future__ import annotations

import os
import pathlib

from conformance import results
from conformance.report import html, json_report, junit


def write_all(run: results.RunResult, reports_root: pathlib.Path) -> pathlib.Path:
    """The three reports in `reports_root/<run id>`; `latest` follows a whole run (not a shard)."""
    folder = reports_root / run.metadata.run_id
    folder.mkdir(parents=True, exist_ok=True)
    json_report.write(run, folder / "report.json")
    junit.write(run, folder / "junit.xml")
    html.write(run, folder / "index.html")
    if run.metadata.complete and not run.metadata.shard:
        _point_latest(reports_root, run.metadata.run_id)
    return folder


def _point_latest(root: pathlib.Path, run_id: str) -> None:
    latest = root / "latest"
    tmp = root / f".latest-{os.getpid()}"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(run_id)
        os.replace(tmp, latest)  # atomic: readers never see it missing
    except OSError:
        if latest.is_symlink():
            latest.unlink()
        latest.write_text(run_id + "\n")
