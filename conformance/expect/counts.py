"""A `count` of a predicate: a number (exactly) or `{min, max}` (either or both)."""

from __future__ import annotations

from typing import Any


def count_ok(count: Any, n: int) -> bool:
    if isinstance(count, int):
        return n == count
    return bool(count.get("min", 0) <= n <= count.get("max", n))


def count_text(count: Any) -> str:
    if isinstance(count, int):
        return f"exactly {count}"
    parts = []
    if "min" in count:
        parts.append(f"at least {count['min']}")
    if "max" in count:
        parts.append(f"at most {count['max']}")
    return " and ".join(parts)
