"""`python -m reference_scheduler.scheduler.cycle_profile --nodes 1000 --pods 10000 --gang 10`:
where one scheduling cycle spends its time, with no cluster at all.

The cache's real snapshot logic runs over synthetic objects held in memory (the same shapes the
watches deliver), writes are counted instead of sent, and the cycle runs once under cProfile.
Printed: the time of each phase (snapshot, plugins opening, each action, closing) and the
functions that took the most time. `vck bench scheduler` measures the same scheduler end to end
through the API server; this separates the cycle's own cost from the API's.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import pstats
import sys
import time
from typing import Any

from reference_scheduler.scheduler import cache as cache_mod
from reference_scheduler.scheduler import conf, conf_load, features
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import framework, registry

CREATED = "2026-01-01T00:00:00Z"


class _Items:
    """Stands in for a watch-fed store: the same `snapshot()` the cache reads."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def snapshot(self) -> list[dict[str, Any]]:
        return self.items


class MemoryCache(cache_mod.Cache):
    """The real snapshot over objects in memory; binds, evictions, statuses and events counted.
    (The scheduler's table-driven tests build theirs on it.)"""

    def __init__(self, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], podgroups: list[dict[str, Any]], queues: list[dict[str, Any]], priority_classes: list[dict[str, Any]] | None = None, pdbs: list[dict[str, Any]] | None = None, switched: features.Features = features.FULL, quotas: list[dict[str, Any]] | None = None) -> None:
        self.scheduler_name = "volcano"
        self.features = switched
        # vc-scheduler's --node-selector: none, every node is the scheduler's.
        self.node_selector = cache_mod.parse_node_selector(())
        self.nodes = _Items(nodes)  # type: ignore[assignment]
        self.pods = _Items(pods)  # type: ignore[assignment]
        self.podgroups = _Items(podgroups)  # type: ignore[assignment]
        self.queues = _Items(queues)  # type: ignore[assignment]
        self.priority_classes = _Items(priority_classes or [])  # type: ignore[assignment]
        self.hypernodes = _Items([])  # type: ignore[assignment]
        self.numatopologies = _Items([])  # type: ignore[assignment]
        self.pdbs = _Items(pdbs or [])  # type: ignore[assignment]
        self.quotas = _Items(quotas or [])  # type: ignore[assignment]
        self.cpu_assignments = {}
        self.plugin_memory = {}
        self.writes: dict[str, int] = {"bind": 0, "evict": 0, "status": 0, "event": 0}

    def bind(self, task: job_info.TaskInfo, node: str) -> None:
        self.writes["bind"] += 1

    def evict(self, task: job_info.TaskInfo, job: job_info.JobInfo, reason: str) -> None:
        self.writes["evict"] += 1

    def update_podgroup_status(self, job: job_info.JobInfo, status: dict[str, Any]) -> None:
        self.writes["status"] += 1

    def update_podgroup_annotations(self, job: job_info.JobInfo, annotations: dict[str, str]) -> None:
        self.writes["status"] += 1

    def update_queue_allocated(self, queue: str, allocated: dict[str, str | None]) -> None:
        self.writes["status"] += 1

    def annotate_node(self, name: str, annotations: dict[str, str]) -> None:
        self.writes["status"] += 1

    def event(self, obj: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.writes["event"] += 1

    def wait_writes(self) -> None:
        """Nothing is in flight: the writes above are counted where they are made."""


@dataclasses.dataclass(frozen=True)
class Workload:
    nodes: int = 1000
    pods: int = 10000
    gang: int = 10
    node_cpu: str = "32"

    def objects(self) -> MemoryCache:
        nodes = [
            {"metadata": {"name": f"node-{i:05d}", "labels": {"kubernetes.io/hostname": f"node-{i:05d}"}}, "spec": {},
             "status": {"allocatable": {"cpu": self.node_cpu, "memory": "256Gi", "pods": "110"}}}
            for i in range(self.nodes)
        ]
        podgroups, pods = [], []
        for g in range(self.pods // self.gang):
            podgroups.append({
                "metadata": {"name": f"pg-{g}", "namespace": "bench", "creationTimestamp": CREATED, "uid": f"pg-{g}"},
                "spec": {"minMember": self.gang, "queue": "default", "minResources": {"cpu": str(self.gang)}},
                "status": {"phase": "Inqueue"},
            })
            for i in range(self.gang):
                pods.append({
                    "metadata": {"name": f"pg-{g}-{i}", "namespace": "bench", "uid": f"pg-{g}-{i}", "creationTimestamp": CREATED,
                                 "annotations": {job_info.GROUP_NAME_ANNOTATION: f"pg-{g}"}},
                    "spec": {"schedulerName": "volcano", "containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}]},
                    "status": {"phase": "Pending"},
                })
        queues = [{"metadata": {"name": "default", "creationTimestamp": CREATED}, "spec": {"weight": 1}, "status": {"state": "Open"}}]
        return MemoryCache(nodes, pods, podgroups, queues)


def profile_cycle(cache: MemoryCache, configuration: conf.Conf) -> tuple[dict[str, float], pstats.Stats]:
    """Run one cycle phase by phase under cProfile; the seconds of each phase and the profile."""
    phases: dict[str, float] = {}
    profiler = cProfile.Profile()
    profiler.enable()
    started = time.perf_counter()
    ssn = framework.open_session(cache, configuration)
    phases["snapshot and open plugins"] = time.perf_counter() - started
    original = {uid: dict(job.podgroup.get("status") or {}) for uid, job in ssn.jobs.items()}
    for name in configuration.actions:
        began = time.perf_counter()
        registry.action_builder(name)().execute(ssn)
        phases[f"action {name}"] = time.perf_counter() - began
    began = time.perf_counter()
    framework.close_session(ssn, cache, original)
    phases["close (status, events)"] = time.perf_counter() - began
    profiler.disable()
    return phases, pstats.Stats(profiler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reference_scheduler.scheduler.cycle_profile", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--gang", type=int, default=10)
    parser.add_argument("--scheduler-conf", default=None, help="a volcano-scheduler.conf (default: Volcano's default conf)")
    parser.add_argument("--top", type=int, default=20, help="how many functions to list")
    args = parser.parse_args(argv)
    if args.gang <= 0 or args.pods % args.gang:
        print(f"--pods {args.pods} must be a positive multiple of --gang {args.gang}", file=sys.stderr)
        return 2
    try:
        configuration = conf_load.load(args.scheduler_conf)
    except conf.ConfError as err:
        print(err, file=sys.stderr)
        return 2
    cache = Workload(args.nodes, args.pods, args.gang).objects()
    phases, stats = profile_cycle(cache, configuration)
    total = sum(phases.values())
    print(f"one cycle: {args.nodes} nodes, {args.pods} pending pods in gangs of {args.gang}: {total:.2f}s (under cProfile)")
    for phase, seconds in phases.items():
        print(f"  {phase:<28} {seconds:8.3f}s {100 * seconds / total if total else 0:5.1f}%")
    print(f"  writes: {', '.join(f'{k} {v}' for k, v in cache.writes.items())}")
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
