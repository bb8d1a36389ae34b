"""Volcano's pod rule: a pod of one of its schedulers may set at most one of the job disruption
budget annotations, as a positive integer or a percentage between 1% and 99%.

Upstream: pkg/webhooks/admission/pods/validate/admit_pod.go (validatePod, validateAnnotation,
validateIntPercentageStr), in its words.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
KEYS = (JDB_MIN_AVAILABLE, JDB_MAX_UNAVAILABLE)
_INT = re.compile(r"^[+-]?[0-9]+$")


def _value_error(key: str, value: str) -> str:
    """As Kubernetes' intstr.Parse reads the value: an integer if it is one, else a string."""
    if _INT.match(value):
        return "" if int(value) > 0 else f'invalid value <"{value}"> for {key}, it must be a positive integer'
    digits = value.replace("%", "")
    if not _INT.match(digits):
        return f'invalid value strconv.Atoi: parsing "{digits}": invalid syntax for {key}'
    number = int(digits)
    if number <= 0 or number >= 100:
        return f'invalid value <"{value}"> for {key}, it must be a valid percentage which between 1% ~ 99%'
    return ""


def validate(pod: Mapping[str, Any], scheduler_names: tuple[str, ...]) -> str:
    """The refusal message ("" when admitted)."""
    if (pod.get("spec") or {}).get("schedulerName") not in scheduler_names:
        return ""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    found = 0
    for key in KEYS:
        if key in annotations:
            found += 1
            error = _value_error(key, str(annotations[key]))
            if error:
                return error
    if found > 1:
        return f"not allow configure multiple annotations <[{' '.join(KEYS)}]> at same time"
    return ""
