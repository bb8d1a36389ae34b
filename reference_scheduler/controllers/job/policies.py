"""Which action a job event leads to: task policies first, then job policies.

Upstream: pkg/controllers/job/job_controller_util.go (applyPolicies). A policy names events
(`event`/`events`, `*` for any) or an `exitCode`, an action, and an optional timeout. A
PodPending event matches only a policy with a timeout (a pod pending longer than it).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

SYNC = "SyncJob"
ANY = "*"
EVENTS = ("PodFailed", "PodEvicted", "PodPending", "PodRunning", "Unknown", "TaskCompleted", "TaskFailed", "OutOfSync", "CommandIssued", "JobUpdated", ANY)
ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "TerminateJob", "CompleteJob", "ResumeJob")
# Events the controller raises for itself (and a pod starting to run); policies never match them.
INTERNAL = ("OutOfSync", "CommandIssued", "PodRunning")


@dataclasses.dataclass(frozen=True)
class Request:
    event: str
    task: str = ""
    pod: str = ""
    exit_code: int | None = None
    # When the condition began (seconds since the epoch), for policies with a timeout.
    since: float = 0.0


@dataclasses.dataclass(frozen=True)
class Decision:
    action: str
    delay_s: float = 0.0


def events_of(policy: Mapping[str, Any]) -> list[str]:
    events = list(policy.get("events") or [])
    if policy.get("event"):
        events.append(policy["event"])
    return events


def parse_timeout(value: str | None) -> float | None:
    """A Go duration such as `10s`, `1m30s`, `500ms`."""
    if not value:
        return None
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    total, number = 0.0, ""
    i = 0
    while i < len(value):
        ch = value[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if value[i : i + 2] == "ms" else ch
        total += float(number) * units[unit]
        number = ""
        i += len(unit)
    return total


def _match(policies: Sequence[Mapping[str, Any]], req: Request) -> Decision | None:
    for policy in policies:
        events = events_of(policy)
        timeout = parse_timeout(policy.get("timeout"))
        if events and (req.event in events or ANY in events):
            # A pending pod is only an event for a policy that says how long is too long.
            if req.event != "PodPending" or timeout is not None:
                return Decision(policy["action"], timeout or 0.0)
        if policy.get("exitCode") is not None and req.exit_code is not None and int(policy["exitCode"]) == req.exit_code:
            return Decision(policy["action"], timeout or 0.0)
    return None


def decide(job: Mapping[str, Any], req: Request) -> Decision:
    if req.event in INTERNAL:
        return Decision(SYNC)
    if req.task:
        for task in job["spec"].get("tasks") or []:
            if task.get("name") == req.task:
                found = _match(task.get("policies") or [], req)
                if found is not None:
                    return found
                break
    return _match(job["spec"].get("policies") or [], req) or Decision(SYNC)
