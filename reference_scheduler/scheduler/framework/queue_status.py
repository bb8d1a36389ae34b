"""What the scheduler writes on Queues when a session closes: `status.allocated`, the resources and
pods of every allocated task of the queue's jobs, a parent counting its children's (the queue
webhook reads a parent's `pods` to refuse a new child of a queue that runs pods itself).

Upstream: pkg/scheduler/framework/session.go (updateQueueStatus: tasks Bound, Binding, Running or
Allocated; each added up the spec.parent chain to `root` when the root queue exists; a queue's
status written only when it changed), util/scheduler_helper.go (ConvertRes2ResList: cpu and memory
always, `pods` and other resources once a task brings them). The root queue's spec (deserved and
guarantee set to the capacity plugin's totals) is not written here.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from reference_scheduler.api import resource
from reference_scheduler.kube import quantity
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework.session import Session

ROOT = "root"
PODS = "pods"


class QueueWriter(Protocol):
    def update_queue_allocated(self, queue: str, allocated: dict[str, str | None]) -> None: ...


def _ancestors(ssn: Session, queue: str) -> list[str]:
    """The parents of `queue` up to root (itself excluded); none without a root queue."""
    if ROOT not in ssn.queues:
        return []
    chain: list[str] = []
    current = ssn.queues.get(queue)
    while current is not None and current.name != ROOT and len(chain) < 64:
        parent = current.parent or ROOT
        chain.append(parent)
        current = ssn.queues.get(parent)
    return chain


def allocated(ssn: Session) -> dict[str, dict[str, str]]:
    """Every queue's `status.allocated` as this session leaves it."""
    totals = {name: resource.Resource() for name in ssn.queues}
    pods = {name: 0 for name in ssn.queues}
    for job in ssn.jobs.values():
        if job.queue not in totals:
            continue
        chain = [job.queue, *(q for q in _ancestors(ssn, job.queue) if q in totals)]
        for task in job.tasks.values():
            if task.status not in job_info.ALLOCATED:
                continue
            for name in chain:
                totals[name].add(task.resreq)
                pods[name] += 1
    out = {}
    for name, total in totals.items():
        listed = {"cpu": quantity.format_milli(total.get("cpu")), "memory": quantity.format_bytes(total.get("memory"))}
        for other in sorted(total.names()):
            if other not in ("cpu", "memory"):
                listed[other] = quantity.format_milli(total.get(other) * 1000)
        if pods[name]:
            listed[PODS] = str(pods[name])
        out[name] = listed
    return out


def _same(before: Mapping[str, Any], after: Mapping[str, str]) -> bool:
    """Equal as quantities (`1000m` is `1`), as Volcano compares them."""
    if set(before) != set(after):
        return False
    try:
        return all(quantity.parse(before[k]) == quantity.parse(v) for k, v in after.items())
    except ValueError:
        return False


def update(ssn: Session, writer: QueueWriter) -> None:
    """Write each queue's allocated resources where they changed; a resource no longer held is
    removed from the map."""
    for name, listed in allocated(ssn).items():
        before = (ssn.queues[name].queue.get("status") or {}).get("allocated") or {}
        if _same(before, listed):
            continue
        writer.update_queue_allocated(name, {**{k: None for k in before if k not in listed}, **listed})
