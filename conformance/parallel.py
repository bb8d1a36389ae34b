"""How many workers a run uses: `--jobs auto` (the default) or a number.

Each worker runs its own embedded cluster (etcd, kube-apiserver, kube-controller-manager, kwok)
and its own implementation, and spends most of its time waiting: on scenario windows ("never
within 15s"), on watches, on the implementation's scheduling period. So more workers than cores
pay off until the cores are busy. Measured on the 2-core development machine (the full reference
run, warm toolchain; docs/architecture.md has the table): 3 workers 313 s, 4 261 s, 5 241 s,
6 279 s (start-up and windows on saturated cores). Hence two and a half workers per core, bounded
by memory (one worker with its cluster and the reference implementation holds about
WORKER_MEMORY_MIB) and by the number of scenarios.
"""

from __future__ import annotations

import os

AUTO = "auto"
WORKERS_PER_CORE = 2.5
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
    allows at `per_worker_mib` each, never more than there are scenarios, at least one."""
    cores = usable_cores() if cores is None else cores
    memory_mib = available_memory_mib() if memory_mib is None else memory_mib
    workers = min(int(cores * per_core), MAX_AUTO_WORKERS)
    if memory_mib is not None:
        workers = min(workers, (memory_mib - RESERVED_MEMORY_MIB) // per_worker_mib)
    return max(1, min(workers, scenarios))


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
