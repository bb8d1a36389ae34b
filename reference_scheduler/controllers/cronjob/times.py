"""When a CronJob's next Job is due: its most recent unmet schedule time, how many were missed,
and how long until the next one.

Upstream: pkg/controllers/cronjob/cronjob_controller_util.go (mostRecentScheduleTime,
nextScheduleTime, nextScheduleTimeDuration). Times are aware datetimes; a CronJob's timestamps are
the API's RFC 3339 strings.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any, Mapping

from reference_scheduler.controllers.cronjob import schedule as cron

# More missed schedules than this are "many": a warning, and only the latest is started.
MANY_MISSED = 100
# The requeue after a schedule time is padded by this, for clock skew between machines.
NEXT_SCHEDULE_DELTA_S = 0.1


class ScheduleTimeError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Recent:
    """What mostRecentScheduleTime finds: where counting starts, the latest unmet time (None:
    none is due) and how many were missed ("none", "few" or "many")."""

    earliest: datetime.datetime
    latest: datetime.datetime | None
    missed: str


def parse_time(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    return datetime.datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=cron.UTC)


def format_time(t: datetime.datetime) -> str:
    """As a metav1.Time is written: UTC, whole seconds."""
    return t.astimezone(cron.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def most_recent(cronjob: Mapping[str, Any], now: datetime.datetime, sched: cron.Schedule, with_deadline: bool) -> Recent:
    """The schedule times since the last one started (or the CronJob's creation), the latest of
    which is due now. With `with_deadline`, times older than startingDeadlineSeconds are not
    counted. Raises ScheduleTimeError when the schedule never fires twice (31 February)."""
    status = cronjob.get("status") or {}
    earliest = parse_time(status.get("lastScheduleTime")) or parse_time(cronjob["metadata"].get("creationTimestamp")) or now
    deadline = (cronjob.get("spec") or {}).get("startingDeadlineSeconds")
    if with_deadline and deadline is not None:
        # Nothing older than the deadline is started any more.
        earliest = max(earliest, now - datetime.timedelta(seconds=int(deadline)))
    t1 = sched.next(earliest)
    t2 = sched.next(t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return Recent(earliest, None, "none")
    if t1 is not None and t2 is not None and now < t2:
        return Recent(earliest, t1, "none")
    between = round((t2 - t1).total_seconds()) if t1 is not None and t2 is not None else 0
    if between < 1:
        raise ScheduleTimeError("time difference between two schedules is less than 1 second")
    assert t1 is not None
    missed_count = int((now - t1).total_seconds()) // between + 1
    # Start from a little before the estimate and let the schedule find the real times, for
    # schedules whose intervals differ (30 6-16/4 * * 1-5).
    t: datetime.datetime | None = t1 + datetime.timedelta(seconds=(missed_count - 2) * between)
    latest = None
    t = sched.next(t) if t is not None else None
    while t is not None and t <= now:
        latest = t
        t = sched.next(t)
    missed = "many" if missed_count > MANY_MISSED else "few" if missed_count > 0 else "none"
    return Recent(earliest, latest, missed)


def next_due(cronjob: Mapping[str, Any], now: datetime.datetime, sched: cron.Schedule) -> tuple[datetime.datetime | None, bool]:
    """The schedule time to start a Job for now (None: none is due) and whether many were missed."""
    recent = most_recent(cronjob, now, sched, with_deadline=True)
    if recent.latest is None or recent.latest > now:
        return None, False
    return recent.latest, recent.missed == "many"


def seconds_until_next(cronjob: Mapping[str, Any], now: datetime.datetime, sched: cron.Schedule) -> float:
    """How long until the schedule fires after the latest time already due (padded a little)."""
    try:
        recent = most_recent(cronjob, now, sched, with_deadline=False)
        base = recent.latest if recent.latest is not None else (recent.earliest if recent.missed == "none" else now)
    except ScheduleTimeError:
        base = now
    following = sched.next(base)
    if following is None:
        return 3600.0
    return (following - now).total_seconds() + NEXT_SCHEDULE_DELTA_S
