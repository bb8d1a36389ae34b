"""Durations as scenarios write them: `30s`, `500ms`, `2m`, `1.5h`."""

from __future__ import annotations

import re

_DURATION = re.compile(r"^(?P<n>[0-9]+(\.[0-9]+)?)(?P<unit>ms|s|m|h)$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
PATTERN = _DURATION.pattern


def parse(text: str) -> float:
    """Seconds in `text`; ValueError says what form is expected."""
    match = _DURATION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"expected a duration such as 30s, 500ms, 2m or 1.5h, got {text!r}")
    return float(match.group("n")) * _UNIT_S[match.group("unit")]
