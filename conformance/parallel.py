"""How many workers a run uses: `--jobs auto` (the default) or a number.

Each worker runs its own embedded cluster (etcd, kube-apiserver, kube-controller-manager, kwok)
and its own implementation, and spends most of its time waiting: on scenario windows ("never
within 15s"), on watches, on the implementation's scheduling period. So more workers than cores
pay off until the cores are busy, and no further: past that, windows are judged on saturated
cores, which is the condition races need. Measured on the 2-core development machine with two
busy CPU processes beside the run (`--stress 2`, the full reference run of 303 scenarios;
docs/architecture.md has the table): 3 workers 623 s, 4 558 s, 5 611 s, each certified. Hence two
workers per core. A worker costs its own start (a cluster and the implementation: 30-60 s of both
cores when several start at once), so a small selection gets one worker per
SCENARIOS_PER_WORKER scenarios (the gang suite, 8 scenarios: 1 worker 120 s, 2 98 s, 4 118 s).
Memory bounds it too: one worker with its cluster and the reference holds about WORKER_MEMORY_MIB.
"""

from __future__ import annotations

import os

AUTO = "auto"
WORKERS_PER_CORE = 2.0
# A worker's start pays off only with this many scenarios to run (see above).
SCENARIOS_PER_WORKER = 4
# One worker's resident memory: its embedded cluster (~450 MiB), the reference's three processes
# and the pytest worker itself, rounded up.
WORKER_MEMORY_MIB = 1024
# A worker on the kind backend runs a kind control plane in Docker (kubelet, containerd, the
# control plane's pods) instead of the embedded processes: more memory, and busy cores of its own.
KIND_WORKER_MIB = 1536
KIND_WORKERS_PER_CORE = 1.0
# Left for everything else on the machine.
RESERVED_MEMORY_MIB = 1024
MAX_AUTO_WORKERS = 8


def available_memory_mib() -> int | None:
    """MemAvailable from /proc/meminfo (Linux); None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask, so a CI container's limit counts)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def auto_workers(
    scenarios: int, cores: int | None = None, memory_mib: int | None = None, per_core: float = WORKERS_PER_CORE, per_worker_mib: int = WORKER_MEMORY_MIB
) -> int:
    """The worker count for `--jobs auto`: `per_core` per core (rounded down), as many as memory
    allows at `per_worker_mib` each, one per SCENARIOS_PER_WORKER scenarios (rounded up, so never
    more workers than scenarios), at least one."""
    cores = usable_cores() if cores is None else cores
    memory_mib = available_memory_mib() if memory_mib is None else memory_mib
    workers = min(int(cores * per_core), MAX_AUTO_WORKERS)
    if memory_mib is not None:
        workers = min(workers, (memory_mib - RESERVED_MEMORY_MIB) // per_worker_mib)
    return max(1, min(workers, -(-scenarios // SCENARIOS_PER_WORKER)))


def parse_jobs(text: str) -> int | str:
    """`--jobs` as given: AUTO or a positive integer (ValueError otherwise, with the fix)."""
    if text == AUTO:
        return AUTO
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"--jobs {text!r}: expected 'auto' or a number of workers (1, 2, ...)") from None
    if value < 1:
        raise ValueError(f"--jobs {value}: must be at least 1 (or 'auto')")
    return value
