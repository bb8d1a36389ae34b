"""Times an object states, read as moments: RFC 3339 values and clock boundaries.

An implementation counts some things by the wall clock: a CronJob creates its Job at a whole
minute, tdm opens its revocable zone at a time of day. The kit judges those by the timestamps the
API wrote (whole seconds), not by when it observed the object.
"""

from __future__ import annotations

import datetime
from typing import Any


def epoch_of(value: Any) -> float | None:
    """An RFC 3339 time ("2026-11-28T01:02:03Z") in seconds since the epoch; None if it is not one."""
    if not isinstance(value, str):
        return None
    try:
        stamp = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp.timestamp()


def past_boundary(value: Any, every_s: float, at_most_s: float) -> bool:
    """`value` is a time at most `at_most_s` past a whole multiple of `every_s` since the epoch."""
    at = epoch_of(value)
    return at is not None and every_s > 0 and at % every_s <= at_most_s
