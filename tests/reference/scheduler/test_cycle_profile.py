"""`python -m reference_scheduler.scheduler.cycle_profile`: one cycle over a synthetic cluster in
memory, with where its time goes. It must place the whole workload (or its figures mean nothing)
and refuse a workload it cannot build."""

from __future__ import annotations

import subprocess
import sys

from reference_scheduler.scheduler import conf_load, cycle_profile


def test_one_cycle_places_every_gang_and_reports_each_phase() -> None:
    cache = cycle_profile.Workload(nodes=20, pods=200, gang=10, node_cpu="10").objects()
    phases, stats = cycle_profile.profile_cycle(cache, conf_load.load(None))
    assert cache.writes["bind"] == 200
    assert list(phases) == ["snapshot and open plugins", "action enqueue", "action allocate", "action backfill", "close (status, events)"]
    assert stats.total_calls > 0  # type: ignore[attr-defined]


def test_a_cluster_too_small_binds_only_whole_gangs() -> None:
    # 3 nodes x 10 CPUs hold 30 one-CPU pods: three gangs of 10, never a part of a fourth.
    cache = cycle_profile.Workload(nodes=3, pods=50, gang=10, node_cpu="10").objects()
    cycle_profile.profile_cycle(cache, conf_load.load(None))
    assert cache.writes["bind"] == 30


def test_the_command_prints_phases_and_refuses_a_bad_workload() -> None:
    ok = subprocess.run([sys.executable, "-m", "reference_scheduler.scheduler.cycle_profile", "--nodes", "5", "--pods", "20", "--gang", "4", "--top", "5"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "action allocate" in ok.stdout and "bind 20" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "reference_scheduler.scheduler.cycle_profile", "--pods", "25", "--gang", "10"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "multiple of --gang" in bad.stderr
