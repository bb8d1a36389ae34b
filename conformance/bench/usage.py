"""CPU seconds and memory of each component while the bench measures: the cluster's (kube-apiserver,
etcd, kwok, kube-controller-manager) and the implementation's (scheduler, controller, webhook),
read from /proc for every process whose command line names the cluster's state folder.

CPU is what each process used inside the window (a process started inside it counts from zero);
memory is its peak resident set (VmHWM) and its resident set at the end, summed over the
processes of a component.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import threading

from conformance.cluster import processes

TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 1.0
# A process's role, by the module it runs (`python -m ...`) or its binary's name.
ROLES = {
    "reference_scheduler.scheduler": "scheduler",
    "reference_scheduler.controllers": "controller",
    "reference_scheduler.webhooks": "webhook",
    "conformance.impl.chaos": "chaos supervisor",
    "vc-scheduler": "scheduler",
    "vc-controller-manager": "controller",
    "vc-webhook-manager": "webhook",
    "kwok-controller": "kwok",
}


def role(argv: tuple[str, ...]) -> str:
    """The component a process belongs to (a chaos supervisor's own `-m` comes first)."""
    if "-m" in argv:
        module = argv[argv.index("-m") + 1] if argv.index("-m") + 1 < len(argv) else "?"
        return ROLES.get(module, module)
    name = pathlib.Path(argv[0]).name if argv else "?"
    return ROLES.get(name, name)


@dataclasses.dataclass(frozen=True)
class Usage:
    component: str
    cpu_s: float
    rss_peak_bytes: int
    rss_end_bytes: int


def _cpu_s(pid: int) -> float | None:
    fields = processes.stat_fields(pid)
    if fields is None:
        return None
    # utime and stime: fields 14 and 15 of /proc/PID/stat, 11 and 12 after the command name.
    return (int(fields[11]) + int(fields[12])) / TICKS


def _memory(pid: int) -> tuple[int, int]:
    """(VmHWM, VmRSS) in bytes; zeros for a process that is gone."""
    found = {"VmHWM:": 0, "VmRSS:": 0}
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            key = line.split(":", 1)[0] + ":"
            if key in found:
                found[key] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return found["VmHWM:"], found["VmRSS:"]


class Sampler:
    """Samples every SAMPLE_S from start() to stop(), so a process that exits inside the window
    keeps the CPU it used until its last sample."""

    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder
        self._baseline: dict[int, float] = {}
        self._last: dict[int, tuple[str, float, int, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-usage", daemon=True)

    def start(self) -> None:
        for proc in processes.under(self.folder):
            cpu = _cpu_s(proc.pid)
            if cpu is not None:
                self._baseline[proc.pid] = cpu
        self._sample()
        self._thread.start()

    def _sample(self) -> None:
        for proc in processes.under(self.folder):
            cpu = _cpu_s(proc.pid)
            if cpu is None:
                continue
            peak, now = _memory(proc.pid)
            self._last[proc.pid] = (role(proc.argv), cpu - self._baseline.get(proc.pid, 0.0), peak, now)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self._sample()

    def stop(self) -> list[Usage]:
        self._stop.set()
        self._thread.join()
        self._sample()
        totals: dict[str, list[float]] = {}
        for component, cpu, peak, now in self._last.values():
            total = totals.setdefault(component, [0.0, 0, 0])
            total[0] += cpu
            total[1] += peak
            total[2] += now
        return [Usage(name, round(t[0], 2), int(t[1]), int(t[2])) for name, t in sorted(totals.items())]
