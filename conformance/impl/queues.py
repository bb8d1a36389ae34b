"""Waiting for the default queues to be open before a scenario submits anything.

Volcano's job webhook refuses a Job whose queue's status is not `Open` (pkg/webhooks/admission/
jobs/validate/admit_job.go), and the `default` queue gets its state only once the queue
controller has seen it: right after an implementation starts, or while a chaos run keeps killing
its controller, a scenario could otherwise be refused for a reason that is not its own.

The wait never decides a verdict: an implementation that does not open its default queue within
the deadline is warned about and then judged by the scenarios, which fail with the refusals.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Sequence, cast

import kubernetes

from conformance.cluster import base, kube

log = logging.getLogger(__name__)

QUEUES = ("scheduling.volcano.sh", "v1beta1", "queues")
DEFAULT_QUEUES = ("default",)
OPEN_TIMEOUT_S = 120.0


def _open(queue: dict[str, Any] | None) -> bool:
    return queue is not None and (queue.get("status") or {}).get("state") == "Open"


def wait_open(api: kubernetes.client.ApiClient, names: Sequence[str] = DEFAULT_QUEUES, timeout_s: float = OPEN_TIMEOUT_S) -> dict[str, str]:
    """Wait until every named Queue exists with state Open (a list, then a watch from it). Returns
    the state of each queue that was not Open when the deadline passed: empty when all are; a
    warning says which were not."""
    custom = kubernetes.client.CustomObjectsApi(api)
    deadline = time.monotonic() + timeout_s
    while True:
        listed = cast(dict[str, Any], custom.list_cluster_custom_object(*QUEUES))
        state = {q["metadata"]["name"]: q for q in listed.get("items") or []}
        if all(_open(state.get(n)) for n in names):
            return {}
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            seen = {n: ((state.get(n) or {}).get("status") or {}).get("state", "no state") if n in state else "absent" for n in names if not _open(state.get(n))}
            log.warning("queues %s were not Open within %.0fs (states: %s); is the queue controller running? Scenarios that submit to them will fail", sorted(seen), timeout_s, seen)
            return seen
        # Follow changes from the list until one could make them all Open; then list again, which
        # also covers a watch that ended or expired.
        watcher = kubernetes.watch.Watch()
        try:
            for event in watcher.stream(custom.list_cluster_custom_object, *QUEUES, resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=max(1, int(remaining))):
                obj = event["object"]
                if event["type"] == "ERROR" or (obj.get("metadata") or {}).get("name") in names and _open(obj):
                    watcher.stop()
                    break
        except kubernetes.client.ApiException as err:
            if err.status != 410:
                raise


class DefaultQueueWait:
    """The adapters' wait for the default queues, done once per cluster: once Open they stay Open
    (a conf switch restarts the scheduler, not the queue controller's work)."""

    def __init__(self) -> None:
        self._waited: base.ClusterHandle | None = None

    def __call__(self, cluster: base.ClusterHandle) -> None:
        if self._waited != cluster:
            wait_open(kube.client(cluster.kubeconfig, cluster.context))
            self._waited = cluster
