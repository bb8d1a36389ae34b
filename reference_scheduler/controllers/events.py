"""Events the controllers record on the objects they manage, as vc-controller-manager's event
recorder does (source component vc-controller-manager)."""

from __future__ import annotations

import logging
from typing import Any, Mapping

import kubernetes

from reference_scheduler.controllers.job.clock import now_rfc3339

log = logging.getLogger(__name__)
NORMAL = "Normal"
WARNING = "Warning"


def record(core: kubernetes.client.CoreV1Api, obj: Mapping[str, Any], api_version: str, kind: str, reason: str, message: str, type_: str = NORMAL) -> None:
    """One Event on `obj` (namespaced). A failure to record is logged, never raised: an event is
    a report, not part of the work."""
    meta = obj["metadata"]
    body: Any = {
        "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
        "involvedObject": {"apiVersion": api_version, "kind": kind, "name": meta["name"], "namespace": meta["namespace"], "uid": meta.get("uid", "")},
        "reason": reason,
        "message": message,
        "type": type_,
        "source": {"component": "vc-controller-manager"},
        "firstTimestamp": now_rfc3339(),
        "lastTimestamp": now_rfc3339(),
        "count": 1,
    }
    try:
        core.create_namespaced_event(meta["namespace"], body)
    except kubernetes.client.ApiException as err:
        log.debug("event %s on %s %s: HTTP %s", reason, kind, meta["name"], err.status)
