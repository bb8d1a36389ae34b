"""sla: a job that has waited longer than its SLA waiting time is let through.

A job's waiting time comes from its PodGroup's annotation (`volcano.sh/sla-waiting-time`, else
`sla-waiting-time`; the job controller copies a Job's annotations onto its PodGroup), else from the
plugin's argument `sla-waiting-time`, else the job has none. Values are Go durations (`1h30m`,
`90s`, `500ms`); a value that does not parse or is not positive counts as absent.

- jobOrder: jobs with a waiting time come before jobs without; between two, the earlier deadline
  (PodGroup creation + waiting time) first.
- jobEnqueueable and jobPipelined: Permit once the deadline has passed, otherwise Abstain. A Permit
  in a tier ends the vote there, so with sla in the first tier an overdue job is enqueued even when
  overcommit or proportion, in a later tier, would have refused it.

Upstream: pkg/scheduler/plugins/sla/sla.go; the annotation is read in JobInfo.SetPodGroup
(pkg/scheduler/api/job_info.go).
"""

from __future__ import annotations

import datetime
import logging
import re
from typing import TYPE_CHECKING, Any, Mapping

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import interface

if TYPE_CHECKING:
    from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAME = "sla"
ARGUMENT = "sla-waiting-time"
# Read in this order: the scheduling API's key first, then the plain one the plugin documents.
ANNOTATIONS = ("volcano.sh/sla-waiting-time", "sla-waiting-time")

_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> datetime.timedelta | None:
    """A Go duration string (`1h2m3s4ms5us6ns`, `1.5h`, `-2s`, `0`) as a timedelta; None if it is
    not one. The kit's own reading of Go's time.ParseDuration grammar."""
    value = text.strip()
    sign = 1.0
    if value[:1] in "+-" and value:
        sign = -1.0 if value[0] == "-" else 1.0
        value = value[1:]
    if value == "0":
        return datetime.timedelta(0)
    if not value:
        return None
    seconds = 0.0
    position = 0
    for match in _PART.finditer(value):
        number = match.group(1)
        if match.start() != position or number in ("", "."):
            return None
        seconds += float(number) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(value):
        return None
    return datetime.timedelta(seconds=sign * seconds)


def _positive(text: Any, where: str) -> datetime.timedelta | None:
    if not isinstance(text, str):
        log.warning("sla: %s is %r, not a duration string such as \"10m\"; ignored", where, text)
        return None
    duration = parse_duration(text)
    if duration is None or duration <= datetime.timedelta(0):
        log.warning("sla: %s is %r, not a positive Go duration such as \"10m\" or \"1h30m\"; ignored", where, text)
        return None
    return duration


def job_waiting_time(job: job_info.JobInfo) -> datetime.timedelta | None:
    """The job's own waiting time from its PodGroup's annotations, or None."""
    annotations = (job.podgroup.get("metadata") or {}).get("annotations") or {}
    for key in ANNOTATIONS:
        if key in annotations:
            duration = _positive(annotations[key], f"annotation {key} of PodGroup {job.uid}")
            if duration is not None:
                return duration
    return None


def creation_time(job: job_info.JobInfo) -> datetime.datetime:
    """The PodGroup's creationTimestamp (RFC 3339); the epoch when it is missing."""
    try:
        return datetime.datetime.fromisoformat(job.creation.replace("Z", "+00:00"))
    except ValueError:
        return datetime.datetime.fromtimestamp(0, datetime.timezone.utc)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


class Sla:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments
        self.global_waiting_time = _positive(arguments[ARGUMENT], f"argument {ARGUMENT}") if ARGUMENT in arguments else None

    def waiting_time(self, job: job_info.JobInfo) -> datetime.timedelta | None:
        """The job's annotation wins over the plugin's argument."""
        own = job_waiting_time(job)
        return own if own is not None else self.global_waiting_time

    def deadline(self, job: job_info.JobInfo) -> datetime.datetime | None:
        waiting = self.waiting_time(job)
        return None if waiting is None else creation_time(job) + waiting

    def on_session_open(self, ssn: Session) -> None:
        deadlines = {uid: self.deadline(job) for uid, job in ssn.jobs.items()}

        def order(left: job_info.JobInfo, right: job_info.JobInfo) -> int:
            ld, rd = deadlines.get(left.uid), deadlines.get(right.uid)
            if ld is None or rd is None:
                return 0 if ld is rd else (1 if ld is None else -1)
            return -1 if ld < rd else (1 if ld > rd else 0)

        def overdue(job: job_info.JobInfo) -> int:
            deadline = deadlines.get(job.uid)
            if deadline is None or _now() < deadline:
                return interface.ABSTAIN
            log.debug("sla: job %s is past its waiting time (deadline %s): permitted", job.uid, deadline.isoformat())
            return interface.PERMIT

        ssn.add_job_order_fn(NAME, order)
        ssn.add_job_enqueueable_fn(NAME, overdue)
        ssn.add_job_pipelined_fn(NAME, overdue)

    def on_session_close(self, ssn: Session) -> None:
        return None
