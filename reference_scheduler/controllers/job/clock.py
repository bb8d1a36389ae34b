"""Timestamps in the API's RFC 3339 form (whole seconds, UTC), written and read back."""

from __future__ import annotations

import calendar
import datetime
import time


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | None) -> float | None:
    if not value:
        return None
    return float(calendar.timegm(time.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")))
