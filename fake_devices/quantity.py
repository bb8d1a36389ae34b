"""Kubernetes quantities for the few sums a profile needs: node capacity from NUMA nodes, allocatable
after the kubelet's reservation, GPU memory in MiB for labels.

The API server re-serializes a quantity in its canonical form (`524288Mi` comes back as `512Gi`,
`2000m` as `2`). Writing the canonical form ourselves keeps an advertised Node equal to what is
read back, so the kit can tell an unchanged node from one to replace.
"""

from __future__ import annotations

import re
from decimal import Decimal

_PATTERN = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$")
_FACTORS: dict[str, Decimal] = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}
_BINARY = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki")
_DECIMAL = ("E", "P", "T", "G", "M", "k")
MIB = 2**20
# The form the profile schema accepts; the same text, so both say the same thing.
PATTERN_TEXT = _PATTERN.pattern


class QuantityError(ValueError):
    """Text that is not a Kubernetes quantity; the message quotes it and gives examples."""


def parse(text: str | int) -> Decimal:
    """The value of a quantity (`64`, `500m`, `80Gi`) as an exact decimal."""
    match = _PATTERN.match(str(text).strip())
    if not match:
        raise QuantityError(f"expected a Kubernetes quantity such as 64, 500m or 80Gi, got {text!r}")
    return Decimal(match.group(1)) * _FACTORS[match.group(2) or ""]


def bytes_of(text: str | int) -> int:
    """Whole bytes (memory quantities); a fraction of a byte rounds up, as the API server does."""
    value = parse(text)
    return int(value) + (1 if value != int(value) else 0)


def format_bytes(value: int) -> str:
    """Canonical text of a byte count: the largest binary suffix that divides it; else (the API server
    then switches to decimal) the largest decimal suffix that divides it; else plain bytes."""
    for suffix in (*_BINARY, *_DECIMAL):
        factor = int(_FACTORS[suffix])
        if value and value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)

