"""resourcequota: a job is enqueued only while its namespace's ResourceQuotas have room for its
PodGroup's `spec.minResources`.

jobEnqueueable, for a job whose PodGroup has minResources, in a namespace with ResourceQuotas: for
each quota, the resources its `status.hard` names are taken from minResources (the job
controller writes them in the quota's own terms: `requests.cpu`, `count/pods`, `cpu`, ...); the
quota's `status.used`, plus what the jobs enqueued earlier in this cycle in the namespace asked
for, plus the job's, must stay within `status.hard` for each of them. Otherwise the job is
rejected (it stays Pending, no pod is created) and its PodGroup gets a Normal event
`Unschedulable`: `resource quota insufficient, requested: ..., used: ..., limited: ...` naming the
resources over the limit. The quota's scopes are not looked at (as upstream).

Upstream: pkg/scheduler/plugins/resourcequota/resourcequota.go; docs/design/resourcequota-plugin.md.
The message's amounts are written here as `map[name:quantity]`; upstream prints Go's internal
form of each quantity, which no client can rely on, so the kit's scenarios match the prefix only.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from reference_scheduler.kube import quantity
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import Session

log = logging.getLogger(__name__)
NAME = "resourcequota"
REASON = "Unschedulable"


def _milli(value: object) -> int:
    return quantity.exact_milli(value)[0]


def _text(amounts: Mapping[str, int]) -> str:
    """Go's map order (by key), each amount as a decimal quantity."""
    return "map[" + " ".join(f"{name}:{quantity.canonical(amounts[name], quantity.DECIMAL_SI)}" for name in sorted(amounts)) + "]"


def quotas_by_namespace(quotas: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for quota in quotas:
        found.setdefault(quota["metadata"].get("namespace", ""), []).append(quota)
    return found


def refusal(requested: Mapping[str, int], pending: Mapping[str, int], quota: Mapping[str, Any]) -> str | None:
    """Why the quota has no room for `requested` on top of its use and `pending` (None: it has).
    Amounts in thousandths. Upstream: the plugin's jobEnqueueableFn."""
    status = quota.get("status") or {}
    hard = {name: _milli(v) for name, v in (status.get("hard") or {}).items()}
    used = {name: _milli(v) for name, v in (status.get("used") or {}).items()}
    asked = {name: amount for name, amount in requested.items() if name in hard}
    exceeded = sorted(name for name, amount in asked.items() if used.get(name, 0) + pending.get(name, 0) + amount > hard[name])
    if not exceeded:
        return None
    return (
        f"resource quota insufficient, requested: {_text({n: asked[n] for n in exceeded})}, "
        f"used: {_text({n: used.get(n, 0) for n in exceeded if n in used})}, limited: {_text({n: hard[n] for n in exceeded})}"
    )


class ResourceQuota:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        by_namespace = quotas_by_namespace(ssn.resource_quotas)
        # What the jobs this plugin let through this cycle asked for, per namespace.
        pending: dict[str, dict[str, int]] = {}

        def enqueueable(job: job_info.JobInfo) -> int:
            given = (job.podgroup.get("spec") or {}).get("minResources")
            if not given or job.namespace not in by_namespace:
                return interface.PERMIT
            requested = {name: _milli(v) for name, v in given.items()}
            namespace_pending = pending.setdefault(job.namespace, {})
            for quota in by_namespace[job.namespace]:
                message = refusal(requested, namespace_pending, quota)
                if message is not None:
                    log.debug("resourcequota: %s not enqueued: %s", job.uid, message)
                    ssn.writer.event(job.podgroup, "Normal", REASON, message)
                    return interface.REJECT
            for name, amount in requested.items():
                namespace_pending[name] = namespace_pending.get(name, 0) + amount
            return interface.PERMIT

        ssn.add_job_enqueueable_fn(NAME, enqueueable)

    def on_session_close(self, ssn: Session) -> None:
        return None
