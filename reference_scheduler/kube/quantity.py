"""Kubernetes resource quantities as numbers: CPU in millicores, everything else in base units."""

from __future__ import annotations

import decimal
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


# --- exact amounts, written back as the API server's Go client writes them ------------------------
BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
_DECIMAL_SUFFIX = {-3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def exact_milli(value: object) -> tuple[int, str]:
    """The quantity in thousandths of its unit, exactly (rounded up below a thousandth, as Go's
    MilliValue does), and its format: BinarySI for a binary suffix (`Mi`), else DecimalSI."""
    text = str(value).strip()
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    suffix = match.group(2) or ""
    if suffix.endswith("i"):
        scale = decimal.Decimal(2) ** (10 * ("KMGTPE".index(suffix[0]) + 1))
    else:
        scale = decimal.Decimal(10) ** {"m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}[suffix]
    milli = decimal.Decimal(match.group(1)) * scale * 1000
    return int(milli.to_integral_value(rounding=decimal.ROUND_CEILING)), BINARY_SI if suffix.endswith("i") else DECIMAL_SI


def canonical(milli: int, format_: str) -> str:
    """An amount written as Go's resource.Quantity.String() writes it: a binary quantity of whole
    units from 1024 up with the largest power-of-1024 suffix that divides it (`2000Mi`); anything
    else decimal, with the largest power-of-1000 suffix that leaves a whole mantissa (`2`,
    `1500m`, `2k`). Upstream: k8s.io/apimachinery/pkg/api/resource (CanonicalizeBytes)."""
    if format_ == BINARY_SI and abs(milli) >= 1024 * 1000 and milli % 1000 == 0:
        return format_bytes(milli // 1000)
    if milli == 0:
        return "0"
    mantissa, exponent = milli, -3
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    down = exponent % 3
    mantissa, exponent = mantissa * 10**down, exponent - down
    while exponent > 18:
        mantissa, exponent = mantissa * 1000, exponent - 3
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"
