"""The reference webhook's JobFlow rule (webhooks/validate_jobflow.py), in Volcano's words
(validate_jobflow.go): the flows' dependsOn must make a DAG of flows that exist."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.webhooks import validate_jobflow
from tests.reference.builders import flows


@pytest.mark.parametrize(
    ("jobflow", "refusal"),
    [
        (flows(("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"])), ""),
        (flows(("a", []), ("b", ["ghost"])), "jobflow Flow is not DAG: vertex is not defined: ghost"),
        (flows(("a", ["c"]), ("b", ["a"]), ("c", ["b"])), "jobflow Flow is not DAG"),
        (flows(("a", ["a"])), "jobflow Flow is not DAG"),
        (flows(), ""),
    ],
)
def test_jobflow_dag(jobflow: dict[str, Any], refusal: str) -> None:
    assert validate_jobflow.validate(jobflow) == refusal
