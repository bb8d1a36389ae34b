"""Cron schedules as Volcano parses them (robfig/cron v3 ParseStandard): each expression's next
activations from a fixed moment, and the expressions that do not parse."""

from __future__ import annotations

import datetime

import pytest

from reference_scheduler.controllers.cronjob import schedule as cron

UTC = datetime.timezone.utc
# A Wednesday.
START = datetime.datetime(2026, 1, 7, 10, 17, 42, 500000, tzinfo=UTC)


def nexts(spec: str, count: int = 3, start: datetime.datetime = START) -> list[str]:
    sched = cron.parse_standard(spec)
    out, t = [], start
    for _ in range(count):
        found = sched.next(t)
        assert found is not None
        out.append(found.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S %a"))
        t = found
    return out


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        ("* * * * *", ["2026-01-07 10:18:00 Wed", "2026-01-07 10:19:00 Wed", "2026-01-07 10:20:00 Wed"]),
        ("*/15 * * * *", ["2026-01-07 10:30:00 Wed", "2026-01-07 10:45:00 Wed", "2026-01-07 11:00:00 Wed"]),
        ("5 4 * * *", ["2026-01-08 04:05:00 Thu", "2026-01-09 04:05:00 Fri", "2026-01-10 04:05:00 Sat"]),
        ("30 6-16/4 * * 1-5", ["2026-01-07 10:30:00 Wed", "2026-01-07 14:30:00 Wed", "2026-01-08 06:30:00 Thu"]),
        ("0 0 * * SUN", ["2026-01-11 00:00:00 Sun", "2026-01-18 00:00:00 Sun", "2026-01-25 00:00:00 Sun"]),
        ("0 12 1 JAN,jul *", ["2026-07-01 12:00:00 Wed", "2027-01-01 12:00:00 Fri", "2027-07-01 12:00:00 Thu"]),
        # Both day fields restricted: either matches (the 13th, or a Friday).
        ("0 0 13 * 5", ["2026-01-09 00:00:00 Fri", "2026-01-13 00:00:00 Tue", "2026-01-16 00:00:00 Fri"]),
        # Day of month `*`: both must match, so only Fridays.
        ("0 0 * * 5", ["2026-01-09 00:00:00 Fri", "2026-01-16 00:00:00 Fri", "2026-01-23 00:00:00 Fri"]),
        # `a/n` runs from a to the field's end.
        ("50/5 * * * *", ["2026-01-07 10:50:00 Wed", "2026-01-07 10:55:00 Wed", "2026-01-07 11:50:00 Wed"]),
        ("@hourly", ["2026-01-07 11:00:00 Wed", "2026-01-07 12:00:00 Wed", "2026-01-07 13:00:00 Wed"]),
        ("@monthly", ["2026-02-01 00:00:00 Sun", "2026-03-01 00:00:00 Sun", "2026-04-01 00:00:00 Wed"]),
        ("@every 90s", ["2026-01-07 10:19:12 Wed", "2026-01-07 10:20:42 Wed", "2026-01-07 10:22:12 Wed"]),
        # In a zone: 09:00 in Shanghai is 01:00 UTC.
        ("TZ=Asia/Shanghai 0 9 * * *", ["2026-01-08 01:00:00 Thu", "2026-01-09 01:00:00 Fri", "2026-01-10 01:00:00 Sat"]),
        ("CRON_TZ=America/New_York 0 9 * * *", ["2026-01-07 14:00:00 Wed", "2026-01-08 14:00:00 Thu", "2026-01-09 14:00:00 Fri"]),
    ],
)
def test_next_activations(spec: str, want: list[str]) -> None:
    assert nexts(spec) == want


def test_a_day_that_never_comes_gives_no_time() -> None:
    assert cron.parse_standard("0 0 31 2 *").next(START) is None


def test_daylight_saving_is_crossed_on_the_wall_clock() -> None:
    # New York springs forward on 2026-03-08: 02:30 does not exist that day; the next 09:00 is
    # still 09:00 local, 13:00 UTC (EDT) instead of 14:00 (EST).
    start = datetime.datetime(2026, 3, 7, 15, 0, tzinfo=UTC)
    assert nexts("TZ=America/New_York 0 9 * * *", 2, start) == ["2026-03-08 13:00:00 Sun", "2026-03-09 13:00:00 Mon"]


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4"),
        ("* * * * * *", "expected exactly 5 fields, found 6"),
        ("61 * * * *", "end of range (61) above maximum (59)"),
        ("* * 0 * *", "beginning of range (0) below minimum (1)"),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1)"),
        ("*/0 * * * *", "step of range should be a positive number"),
        ("1-2-3 * * * *", "too many hyphens"),
        ("a * * * *", "failed to parse int from a"),
        ("* * * * 7", "end of range (7) above maximum (6)"),
        ("@fortnightly", "unrecognized descriptor"),
        ("TZ=Mars/Olympus * * * * *", "unknown time zone Mars/Olympus"),
    ],
)
def test_expressions_that_do_not_parse(spec: str, error: str) -> None:
    with pytest.raises(cron.ScheduleError, match=__import__("re").escape(error)):
        cron.parse_standard(spec)
