"""Kubernetes resource quantities as numbers: CPU in millicores, everything else in base units."""

from __future__ import annotations

import re

_SUFFIX = {
    "": 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def parse(value: object) -> float:
    """The quantity's value in base units (`500m` -> 0.5, `1Gi` -> 1073741824)."""
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    return float(match.group(1)) * _SUFFIX[match.group(2) or ""]


def milli(name: str, value: object) -> float:
    """CPU is counted in millicores, as Volcano's Resource does; other resources in base units."""
    number = parse(value)
    return number * 1000.0 if name == "cpu" else number


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


def format_milli(millis: float) -> str:
    """A decimal quantity from thousandths, as Kubernetes writes one (`2`, `1500m`, `0`)."""
    whole = round(millis)
    return str(whole // 1000) if whole % 1000 == 0 else f"{whole}m"


def format_bytes(value: float) -> str:
    """A binary quantity from bytes, with the largest suffix that divides it (`16Gi`, `1536Mi`)."""
    whole = round(value)
    for suffix, size in _BINARY:
        if whole and whole % size == 0:
            return f"{whole // size}{suffix}"
    return str(whole)
