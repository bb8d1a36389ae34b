"""What a pod counts for in a ResourceQuota, the unit Volcano sums a PodGroup's minResources in.

Volcano's controllers fill `spec.minResources` with Kubernetes' quota usage of the pods the gang
needs (the pod evaluator's `PodUsageFunc`), so a PodGroup names both the plain resources and
their quota forms: `count/pods`, `pods`, `cpu` and `requests.cpu`, `limits.cpu`, the same for
memory and ephemeral storage, hugepages with their `requests.` form, and each extended resource
as `requests.<name>` and, added back by Volcano, `<name>`. Amounts are kept exactly and written
as the API's Go client writes them, each in the format of the first quantity it was summed from.

Upstream: pkg/controllers/util/util.go (GetPodQuotaUsage, CalTaskRequests), with
k8s.io/kubernetes/pkg/quota/v1/evaluator/core/pods.go (PodUsageFunc, podComputeUsageHelper).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from reference_scheduler.kube import quantity

HUGEPAGES_PREFIX = "hugepages-"
REQUESTS_PREFIX = "requests."
LIMITS_PREFIX = "limits."
# The resources named without a domain that the quota counts under their own name too.
_NAMED = ("cpu", "memory", "ephemeral-storage")


@dataclasses.dataclass(frozen=True)
class Amount:
    """An exact amount in thousandths of its unit, and the format it is written in."""

    milli: int
    format: str

    def plus(self, other: Amount) -> Amount:
        # Go's Quantity.Add keeps the receiver's format.
        return Amount(self.milli + other.milli, self.format)


Usage = dict[str, Amount]


def _amount(value: object) -> Amount:
    milli, format_ = quantity.exact_milli(value)
    return Amount(milli, format_)


def _is_extended(name: str) -> bool:
    """A resource outside kubernetes.io's own names (`nvidia.com/gpu`), as the quota sees one."""
    if "/" not in name or name.startswith(REQUESTS_PREFIX):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def _containers_total(spec: Mapping[str, Any], kind: str) -> dict[str, Amount]:
    """The pod's requests (or limits): its containers summed, raised to any init container's."""
    total: dict[str, Amount] = {}
    for container in spec.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get(kind) or {}).items():
            amount = _amount(value)
            total[name] = total[name].plus(amount) if name in total else amount
    for container in spec.get("initContainers") or []:
        for name, value in ((container.get("resources") or {}).get(kind) or {}).items():
            amount = _amount(value)
            if name not in total or amount.milli > total[name].milli:
                total[name] = amount
    return total


def pod_usage(spec: Mapping[str, Any], terminal: bool = False) -> Usage:
    """What one pod of this spec counts for (a finished pod only for `count/pods`)."""
    one = Amount(1000, quantity.DECIMAL_SI)
    usage: Usage = {"count/pods": one}
    if terminal:
        return usage
    requests, limits = _containers_total(spec, "requests"), _containers_total(spec, "limits")
    usage["pods"] = one
    for name in _NAMED:
        if name in requests:
            usage[name] = requests[name]
            usage[REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            usage[LIMITS_PREFIX + name] = limits[name]
    for name, amount in requests.items():
        if name.startswith(HUGEPAGES_PREFIX):
            usage[name] = amount
            usage[REQUESTS_PREFIX + name] = amount
        elif _is_extended(name):
            # The quota counts it as requests.<name>; Volcano adds it back under its own name.
            usage[REQUESTS_PREFIX + name] = amount
            usage[name] = amount
    return usage


def times(usage: Usage, count: int) -> Usage:
    """`count` pods' worth (CalTaskRequests); nothing for none."""
    total: Usage = {}
    for _ in range(max(0, count)):
        total = add(total, usage)
    return total


def add(a: Usage, b: Usage) -> Usage:
    """The sum, each resource in the format `a` has it in (quota's Add)."""
    out = dict(a)
    for name, amount in b.items():
        out[name] = out[name].plus(amount) if name in out else amount
    return out


def as_resource_list(usage: Usage) -> dict[str, str]:
    return {name: quantity.canonical(amount.milli, amount.format) for name, amount in sorted(usage.items())}
