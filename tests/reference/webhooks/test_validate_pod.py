"""The reference webhook's pod rules (webhooks/validate_pod.py), in Volcano's words (admit_pod.go):
a Volcano pod's job disruption budget annotations."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.webhooks import validate_pod


def pod(scheduler: str = "volcano", **annotations: str) -> dict[str, Any]:
    return {"metadata": {"annotations": annotations}, "spec": {"schedulerName": scheduler}}


MIN, MAX = validate_pod.JDB_MIN_AVAILABLE, validate_pod.JDB_MAX_UNAVAILABLE


@pytest.mark.parametrize(
    ("p", "refusal"),
    [
        (pod(), ""),
        (pod(**{MIN: "2"}), ""),
        (pod(**{MAX: "50%"}), ""),
        (pod(**{MIN: "0"}), f'invalid value <"0"> for {MIN}, it must be a positive integer'),
        (pod(**{MAX: "-1"}), f'invalid value <"-1"> for {MAX}, it must be a positive integer'),
        (pod(**{MAX: "100%"}), f'invalid value <"100%"> for {MAX}, it must be a valid percentage which between 1% ~ 99%'),
        (pod(**{MAX: "0%"}), f'invalid value <"0%"> for {MAX}, it must be a valid percentage which between 1% ~ 99%'),
        (pod(**{MIN: "many"}), f'invalid value strconv.Atoi: parsing "many": invalid syntax for {MIN}'),
        (pod(**{MIN: "1", MAX: "1"}), f"not allow configure multiple annotations <[{MIN} {MAX}]> at same time"),
        # Only the first bad value is reported.
        (pod(**{MIN: "0", MAX: "0"}), f'invalid value <"0"> for {MIN}, it must be a positive integer'),
        (pod("default-scheduler", **{MIN: "0"}), ""),
    ],
)
def test_pod_job_disruption_budget(p: dict[str, Any], refusal: str) -> None:
    assert validate_pod.validate(p, ("volcano",)) == refusal
