"""The JobTemplate controller: a JobTemplate's status lists the Jobs made from it.

Upstream: pkg/controllers/jobtemplate/jobtemplate_controller_action.go (syncJobTemplate): the Jobs
labelled `volcano.sh/createdByJobTemplate: <namespace>.<template>`, written only once there is one.
Upstream syncs a template when it is added and when such a Job is added, not when one is deleted;
so the list is written here when a Job appears that it does not name yet.
"""

from __future__ import annotations

from typing import Any

from reference_scheduler.controllers.jobflow import flow


def depends_on_list(template: dict[str, Any], jobs: list[dict[str, Any]]) -> list[str] | None:
    """The names the status should list, or None when it stays as it is (no Job made yet, or every
    Job is listed already)."""
    meta = template["metadata"]
    mark = flow.object_string(meta["namespace"], meta["name"])
    names = sorted(j["metadata"]["name"] for j in jobs if j["metadata"].get("namespace") == meta["namespace"] and (j["metadata"].get("labels") or {}).get(flow.CREATED_BY_TEMPLATE) == mark)
    if not names or set(names) <= set((template.get("status") or {}).get("jobDependsOnList") or []):
        return None
    return names
