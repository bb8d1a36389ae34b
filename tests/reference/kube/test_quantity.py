"""Quantities (kube/quantity.py) written as the API server and its Go clients write them: exact
sums kept in the format of the first quantity, CPU in millis, memory in binary units."""

from __future__ import annotations

import pytest

from reference_scheduler.kube import quantity


def test_quantities_are_written_as_kubernetes_writes_them() -> None:
    assert [quantity.format_milli(v) for v in (0, 1000, 1500, 250)] == ["0", "1", "1500m", "250m"]
    assert [quantity.format_bytes(v) for v in (0, 1024, 1536 * 2**20, 16 * 2**30, 1000)] == ["0", "1Ki", "1536Mi", "16Gi", "1000"]


@pytest.mark.parametrize(
    ("given", "times", "want"),
    [
        ("1000m", 2, "2"), ("500m", 3, "1500m"), ("1000Mi", 2, "2000Mi"), ("512Mi", 3, "1536Mi"),
        ("1G", 2, "2G"), ("2k", 3, "6k"), ("1536", 1, "1536"), ("1.5", 2, "3"), ("100m", 10, "1"),
        ("0", 5, "0"), ("512", 1, "512"),
    ],
)
def test_quantities_are_written_as_go_writes_them(given: str, times: int, want: str) -> None:
    milli, format_ = quantity.exact_milli(given)
    assert quantity.canonical(milli * times, format_) == want
