"""tdm (time-division multiplexing): nodes shared with another cluster by time of day.

A node labelled `volcano.sh/revocable-zone: Z` is a revocable node of zone Z; the plugin's
argument `tdm.revocable-zone.Z: "HH:MM-HH:MM"` is the daily window in which the scheduler may use
it (in the scheduler's local time; an end not after the start ends the next day). A task may use
revocable nodes when its pod is annotated `volcano.sh/revocable-zone: "*"`, or, without that
annotation, `volcano.sh/preemptable: "true"`.

- Predicate: a revocable node whose zone is not configured, whose window is not open now (or does
  not parse), or, for a task that may not use revocable nodes, any revocable node, is refused.
- Score: 100 on an open revocable node for a task that may use it.
- preemptable: a preemptor that is itself preemptable (its pod's `volcano.sh/preemptable`, true
  when absent) or may use revocable nodes takes no victims; another may take Running preemptable
  pods on non-revocable nodes, per job no more than the job's disruption budget allows (below).
- victimTasks (the shuffle action): at most once per `tdm.evict.period` (default 1m), the Running
  preemptable pods on revocable nodes of every configured zone whose window is closed, per job no
  more than its budget allows.
- jobOrder: a job that is not preemptable (its PodGroup's `volcano.sh/preemptable` annotation,
  else label, false when absent) goes first. jobPipelined: Permit when the job is pipelined, else
  Reject. jobStarving: a job that is not preemptable and has pending tasks.

A job's budget is its PodGroup's `volcano.sh/jdb-min-available` (evict down to it) or else
`volcano.sh/jdb-max-unavailable` (a number or a percentage of its tasks, rounded up); with
neither, or with fewer running than the minimum, one pod.

Upstream: pkg/scheduler/plugins/tdm/tdm.go; pkg/scheduler/api/pod_info.go (GetPodPreemptable,
GetPodRevocableZone), job_info.go (extractPreemptable, extractBudget); docs/design/tdm-plugin.md.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import math
import re
from typing import Any, Callable, Mapping

import numpy as np

from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import extension_points, interface
from reference_scheduler.scheduler.framework.session import Session
from reference_scheduler.scheduler.plugins import sla

log = logging.getLogger(__name__)
NAME = "tdm"
ZONE_ARGUMENT_PREFIX = "tdm.revocable-zone."
EVICT_PERIOD_ARGUMENT = "tdm.evict.period"
REVOCABLE_ZONE_KEY = "volcano.sh/revocable-zone"
PREEMPTABLE_KEY = job_info.PREEMPTABLE_KEY
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
MAX_NODE_SCORE = 100.0
NOT_ALLOWED = "not allow to dispatch to revocable node"
# Go's "15:04" layout: an hour of one or two digits, minutes of exactly two.
_CLOCK = re.compile(r"^([0-9]{1,2}):([0-9]{2})$")
# Where the shuffle part remembers its last round: the session is rebuilt every cycle.
MEMORY_KEY = "tdm.last-evict"


def _go_bool(value: Any) -> bool | None:
    text = str(value)
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def task_zone(pod: dict[str, Any]) -> str:
    """`*` when the pod may use revocable nodes, else ''. Upstream: GetPodRevocableZone."""
    annotations = pod["metadata"].get("annotations") or {}
    if REVOCABLE_ZONE_KEY in annotations:
        return "*" if annotations[REVOCABLE_ZONE_KEY] == "*" else ""
    if PREEMPTABLE_KEY in annotations and _go_bool(annotations[PREEMPTABLE_KEY]):
        return "*"
    return ""


def job_preemptable(job: job_info.JobInfo) -> bool:
    """The PodGroup's annotation, else its label; false when absent or not a boolean.
    Upstream: JobInfo.extractPreemptable."""
    meta = job.podgroup.get("metadata") or {}
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        if PREEMPTABLE_KEY in source:
            return bool(_go_bool(source[PREEMPTABLE_KEY]))
    return False


def window(raw: str, now: datetime.datetime) -> tuple[datetime.datetime, datetime.datetime] | None:
    """Today's window of `HH:MM-HH:MM` (an end not after the start is tomorrow's), None when it
    does not parse. Upstream: parseRevocableZone."""
    parts = raw.strip().split("-")
    if len(parts) != 2:
        return None
    clocks = [_CLOCK.match(part) for part in parts]
    if not all(clocks) or any(int(m.group(1)) > 23 or int(m.group(2)) > 59 for m in clocks if m):
        return None
    (h1, m1), (h2, m2) = ((int(m.group(1)), int(m.group(2))) for m in clocks if m)
    start = now.replace(hour=h1, minute=m1, second=0, microsecond=0)
    end = now.replace(hour=h2, minute=m2, second=0, microsecond=0)
    if (h1, m1) >= (h2, m2):
        end += datetime.timedelta(days=1)
    return start, end


@dataclasses.dataclass(frozen=True)
class Zones:
    windows: Mapping[str, str]

    def closed_reason(self, zone: str, now: datetime.datetime) -> str | None:
        """Why a revocable node of the zone may not be used now; None when its window is open.
        Upstream: availableRevocableZone."""
        raw = self.windows.get(zone)
        if raw is None:
            return f"revocable zone {zone} not support"
        span = window(raw, now)
        if span is None:
            return f"revocable zone {raw} format error"
        seconds = math.floor(now.timestamp())
        if seconds < math.floor(span[0].timestamp()) or seconds > math.floor(span[1].timestamp()):
            return f"current time beyond revocable zone {zone}:{raw}"
        return None


def _int_or_percent(text: str, total: int) -> int:
    """Upstream: tdmPlugin.parseIntStr (intstr, percentages rounded up; anything else 0)."""
    if re.fullmatch(r"-?[0-9]+", text.strip()):
        return int(text)
    if text.endswith("%") and re.fullmatch(r"[0-9]+", text[:-1]):
        return math.ceil(int(text[:-1]) * total / 100)
    return 0


def max_evictions(job: job_info.JobInfo) -> int:
    """How many of the job's pods may go now. Upstream: getMaxPodEvictNum."""
    annotations = (job.podgroup.get("metadata") or {}).get("annotations") or {}
    running = job.count({job_info.TaskStatus.RUNNING})
    total = len(job.tasks)
    if JDB_MIN_AVAILABLE in annotations:
        minimum = _int_or_percent(str(annotations[JDB_MIN_AVAILABLE]), total)
        if running >= minimum:
            return running - minimum
    elif JDB_MAX_UNAVAILABLE in annotations:
        allowed = _int_or_percent(str(annotations[JDB_MAX_UNAVAILABLE]), total)
        finished = job.count(job_info.COMPLETED)
        unavailable = total - finished - running
        return 0 if unavailable >= allowed else allowed - unavailable
    return 1


def budgeted(ssn: Session, candidates: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    """The candidates, per job no more than its budget, in name order. Upstream: maxVictims."""
    by_job: dict[str, list[job_info.TaskInfo]] = {}
    for task in candidates:
        by_job.setdefault(task.job, []).append(task)
    victims = []
    for uid, tasks in by_job.items():
        job = ssn.jobs.get(uid)
        if job is not None:
            victims += sorted(tasks, key=lambda t: t.name)[: max(0, min(max_evictions(job), len(tasks)))]
    return victims


class Tdm:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any], clock: Callable[[], datetime.datetime] | None = None) -> None:
        self.zones = Zones({key.replace(ZONE_ARGUMENT_PREFIX, "", 1): str(value) for key, value in arguments.items() if ZONE_ARGUMENT_PREFIX in key})
        period = sla.parse_duration(str(arguments.get(EVICT_PERIOD_ARGUMENT, "1m")))
        self.evict_period = period if period is not None else datetime.timedelta(minutes=1)
        # Local time, as upstream reads the windows in the scheduler's own zone.
        self.clock = clock or (lambda: datetime.datetime.now().astimezone())

    def on_session_open(self, ssn: Session) -> None:
        now = self.clock()
        nodes = ssn.node_list()
        zones = [node.labels.get(REVOCABLE_ZONE_KEY, "") for node in nodes]
        closed = {zone: self.zones.closed_reason(zone, now) for zone in set(zones) if zone}
        open_ = np.array([bool(zone) and closed[zone] is None for zone in zones], dtype=bool)
        refused_always = np.array([closed.get(zone) if zone else None for zone in zones], dtype=object)

        def predicate(task: job_info.TaskInfo) -> list[extension_points.PredicateCheck]:
            reasons = refused_always.copy()
            if not task_zone(task.pod):
                reasons[open_] = NOT_ALLOWED
            failed = np.fromiter((r is not None for r in reasons), dtype=bool, count=len(reasons))
            return [(failed, reasons)] if failed.any() else []

        def scores(task: job_info.TaskInfo) -> np.ndarray:
            return np.where(open_, MAX_NODE_SCORE, 0.0) if task_zone(task.pod) else np.zeros(len(zones))

        on_revocable = {node.name for node, zone in zip(nodes, zones, strict=True) if zone}

        def preemptable(preemptor: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            if preemptor.preemptable or task_zone(preemptor.pod):
                return [], interface.REJECT
            chosen = [t for t in candidates if t.preemptable and t.status is job_info.TaskStatus.RUNNING and t.node_name in ssn.nodes and t.node_name not in on_revocable]
            return budgeted(ssn, chosen), interface.PERMIT

        def victims(tasks: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
            """Upstream: victimsFn (the shuffle action's)."""
            last = ssn.plugin_memory.get(MEMORY_KEY)
            current = self.clock()
            if last is not None and last + self.evict_period > current:
                return []
            found: list[job_info.TaskInfo] = []
            for zone in sorted(self.zones.windows):
                if self.zones.closed_reason(zone, current) is None:
                    continue
                held = [t for node, z in zip(nodes, zones, strict=True) if z == zone for t in node.tasks.values()]
                found += budgeted(ssn, [t for t in held if t.preemptable and t.status is job_info.TaskStatus.RUNNING])
            ssn.plugin_memory[MEMORY_KEY] = current
            return found

        ssn.add_batch_predicate_fn(NAME, predicate)
        ssn.add_batch_node_order_fn(NAME, scores)
        ssn.add_preemptable_fn(NAME, preemptable)
        ssn.add_victim_tasks_fn(NAME, victims)
        ssn.add_job_order_fn(NAME, lambda left, right: 0 if job_preemptable(left) == job_preemptable(right) else (1 if job_preemptable(left) else -1))
        ssn.add_job_pipelined_fn(NAME, lambda job: interface.PERMIT if job.is_pipelined() else interface.REJECT)
        ssn.add_job_starving_fn(NAME, lambda job: not job_preemptable(job) and bool(job.by_status(job_info.TaskStatus.PENDING)))

    def on_session_close(self, ssn: Session) -> None:
        return None
