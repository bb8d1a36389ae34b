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
