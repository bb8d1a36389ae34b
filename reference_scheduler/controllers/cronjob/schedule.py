"""Cron schedules as Volcano reads them: the standard five fields (minute, hour, day of month,
month, day of week), the `@yearly`-style descriptors and `@every <duration>`, with an optional
`TZ=<zone>` (or `CRON_TZ=`) prefix.

Upstream: Volcano parses with robfig/cron v3's ParseStandard (pkg/controllers/cronjob/
cronjob_controller_util.go, pkg/webhooks/admission/cronjobs/validate/admit_cronjob.go). The rules
kept here are that parser's: `*` and `?` mean every value, `a-b`, `a-b/n`, `*/n`, `a/n` (from a
to the field's end) and comma lists; month and weekday names (JAN, SUN); weekdays 0-6 from
Sunday; when both the day of month and the day of week are restricted, a day matching either is
taken, and when either is `*` both must match. The next time is searched field by field from the
month down, in the schedule's zone, for at most five years.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
import zoneinfo
from typing import Protocol

UTC = datetime.timezone.utc
# The zone a schedule without TZ= runs in: the controller's own (the machine's local time).
LOCAL: datetime.tzinfo = datetime.datetime.now().astimezone().tzinfo or UTC
# The "every value" mark robfig keeps beside a field's bits: a day field written `*` or `?`.
STAR = 1 << 63
SEARCH_YEARS = 5


class ScheduleError(ValueError):
    """The schedule does not parse, in words close to the parser's."""


@dataclasses.dataclass(frozen=True)
class Bounds:
    low: int
    high: int
    names: tuple[tuple[str, int], ...] = ()


MINUTES = Bounds(0, 59)
HOURS = Bounds(0, 23)
DAYS = Bounds(1, 31)
MONTHS = Bounds(1, 12, tuple((n, i + 1) for i, n in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))))
WEEKDAYS = Bounds(0, 6, tuple((n, i) for i, n in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))))


class Schedule(Protocol):
    def next(self, after: datetime.datetime) -> datetime.datetime | None:
        """The first activation strictly after `after` (None: none within the search horizon)."""
        ...


def load_location(name: str) -> datetime.tzinfo:
    """A zone by its IANA name, as Go's time.LoadLocation: "" and "UTC" are UTC, "Local" the
    controller's own zone."""
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return LOCAL
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as err:
        raise ScheduleError(f"unknown time zone {name}") from err


def _number(text: str, bounds: Bounds) -> int:
    named = dict(bounds.names).get(text.lower())
    if named is not None:
        return named
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise ScheduleError(f"failed to parse int from {text}")
    value = int(text)
    if value < 0:
        raise ScheduleError(f"negative number ({value}) not allowed: {text}")
    return value


def _range(expr: str, bounds: Bounds) -> int:
    """The bits of one comma-separated part of a field."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, STAR
    else:
        start = _number(low_and_high[0], bounds)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], bounds)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1], Bounds(0, 0))
        if len(low_and_high) == 1:
            end = bounds.high
        if step > 1:
            extra = 0
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    bits = 0
    for value in range(start, end + 1, step):
        bits |= 1 << value
    return bits | extra


def _field(text: str, bounds: Bounds) -> int:
    bits = 0
    for part in (p for p in text.split(",") if p):
        bits |= _range(part, bounds)
    return bits


@dataclasses.dataclass(frozen=True)
class SpecSchedule:
    """A five-field schedule: one bit per allowed value of each field."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    # None: the zone of the time it is asked about (the controller's, for a schedule without TZ=).
    location: datetime.tzinfo | None = None

    def _day_matches(self, t: datetime.datetime) -> bool:
        dom_match = bool(1 << t.day & self.dom)
        dow_match = bool(1 << ((t.weekday() + 1) % 7) & self.dow)
        if self.dom & STAR or self.dow & STAR:
            return dom_match and dow_match
        return dom_match or dow_match

    def next(self, after: datetime.datetime) -> datetime.datetime | None:
        """Upstream: robfig/cron v3 SpecSchedule.Next. Wall-clock steps (a month, a day) are taken
        on the calendar, hour and minute steps on absolute time, so a daylight-saving change is
        crossed as upstream crosses it."""
        zone = self.location or after.tzinfo or LOCAL
        t = _shift(after.astimezone(zone).replace(microsecond=0), 1)
        added = False
        year_limit = t.year + SEARCH_YEARS
        while t.year <= year_limit:
            if not 1 << t.month & self.month:
                if not added:
                    added, t = True, _wall(zone, t.year, t.month, 1)
                t = _wall(zone, t.year, t.month + 1, t.day, t.hour, t.minute)
                continue
            if not self._day_matches(t):
                if not added:
                    added, t = True, _wall(zone, t.year, t.month, t.day)
                t = _wall(zone, t.year, t.month, t.day + 1, t.hour, t.minute)
                if t.hour:  # a daylight-saving change moved midnight: back to the day's start
                    t = _shift(t, (24 - t.hour) * 3600 if t.hour > 12 else -t.hour * 3600)
                continue
            if not 1 << t.hour & self.hour:
                if not added:
                    added, t = True, _wall(zone, t.year, t.month, t.day, t.hour)
                t = _shift(t, 3600)
                continue
            if not 1 << t.minute & self.minute:
                if not added:
                    added, t = True, t.replace(second=0)
                t = _shift(t, 60)
                continue
            if t.second:
                if not added:
                    added = True
                t = _shift(t, 60 - t.second)
                continue
            return t.astimezone(after.tzinfo or zone)
        return None


@dataclasses.dataclass(frozen=True)
class EverySchedule:
    """`@every <duration>`: a fixed delay, whole seconds, at least one."""

    seconds: int

    def next(self, after: datetime.datetime) -> datetime.datetime | None:
        return after.replace(microsecond=0) + datetime.timedelta(seconds=self.seconds)


def _shift(t: datetime.datetime, seconds: int) -> datetime.datetime:
    """`t` moved by absolute seconds, shown in its own zone."""
    zone = t.tzinfo
    return (t.astimezone(UTC) + datetime.timedelta(seconds=seconds)).astimezone(zone)


def _wall(zone: datetime.tzinfo, year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime.datetime:
    """A wall-clock time in `zone`, with month and day overflow carried as Go's time.Date does."""
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    date = datetime.date(year, month, 1) + datetime.timedelta(days=day - 1)
    local = datetime.datetime(date.year, date.month, date.day, hour, minute, tzinfo=zone)
    return local.astimezone(UTC).astimezone(zone)


DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration_s(text: str) -> float:
    """A Go duration ("90s", "1h30m") in seconds."""
    if not text or _DURATION_PART.sub("", text) != "":
        raise ScheduleError(f"failed to parse duration @every {text}")
    return sum(float(n) * _UNIT_S[u] for n, u in _DURATION_PART.findall(text))


def parse_standard(spec: str) -> Schedule:
    """Upstream: robfig/cron v3 ParseStandard (minute, hour, day of month, month, day of week,
    and descriptors)."""
    if not spec:
        raise ScheduleError("empty spec string")
    location: datetime.tzinfo | None = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        head, _, rest = spec.partition(" ")
        location = load_location(head.partition("=")[2])
        spec = rest.strip()
    if spec.startswith("@"):
        if spec.startswith("@every "):
            return EverySchedule(max(1, int(_duration_s(spec[len("@every "):]))))
        if spec not in DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {fields}")
    minute, hour, dom, month, dow = fields
    return SpecSchedule(_field(minute, MINUTES), _field(hour, HOURS), _field(dom, DAYS), _field(month, MONTHS), _field(dow, WEEKDAYS), location)
