"""Why a Queue is refused: the resource rules of Volcano's queue admission.

Upstream: pkg/webhooks/admission/queues/validate/validate_queue.go (validateResourceOfQueue). A
queue's deserved share may not exceed its capability, nor its guarantee its capability or its
deserved share, in any resource: a queue can never be owed more than it may hold. The reasons
keep Volcano's wording, which users match on. (The weight is defaulted by the mutating webhook;
hierarchy and deletion rules are not modelled here.)
"""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.scheduler.api import resource

PATH = "requestBody.spec"


def _less_partly(left: resource.Resource, right: resource.Resource) -> bool:
    """True when `left` is below `right` in some resource `right` names (a resource `left` does
    not name counts as zero), as Volcano's Resource.LessPartly with a zero default."""
    return any(left.get(name) < right.get(name) for name in right.names())


def _shown(res: resource.Resource) -> str:
    """Volcano's Resource.String(): cpu in millicores and memory in bytes, two decimals."""
    parts = [f"cpu {res.get('cpu'):.2f}", f"memory {res.get('memory'):.2f}"]
    parts += [f"{name} {res.get(name):.2f}" for name in sorted(res.names()) if name not in ("cpu", "memory")]
    return ", ".join(parts)


def validate(queue: Mapping[str, Any]) -> str:
    """The reason a Queue is refused, or '' when it is admitted."""
    spec = queue.get("spec") or {}
    weight = spec.get("weight")
    if weight is not None and int(weight) <= 0:
        return f'{PATH}.weight: Invalid value: {int(weight)}: queue weight must be a positive integer'
    capability = resource.Resource.from_list(spec.get("capability"))
    deserved = resource.Resource.from_list(spec.get("deserved"))
    guarantee = resource.Resource.from_list((spec.get("guarantee") or {}).get("resource"))
    if spec.get("capability") and _less_partly(capability, deserved):
        return f'{PATH}.deserved: Invalid value: "{_shown(deserved)}": deserved should less equal than capability'
    if spec.get("capability") and _less_partly(capability, guarantee):
        return f'{PATH}.guarantee: Invalid value: "{_shown(guarantee)}": guarantee should less equal than capability'
    if spec.get("deserved") and _less_partly(deserved, guarantee):
        return f'{PATH}.guarantee: Invalid value: "{_shown(guarantee)}": guarantee should less equal than deserved'
    return ""
