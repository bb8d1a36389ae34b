"""One measure on a fresh stage: the ceiling (no scheduler), or an implementation over the
workload in one of three modes.

- scheduler-only: PodGroups and pods are created while the implementation's scheduler is held
  stopped; the start is the moment it is started again.
- end-to-end: Volcano Jobs are created (through the implementation's webhook) while its
  controller and scheduler are held; the start is the moment both are started again.
- steady: the implementation runs; whole gangs arrive at a fixed rate of pods per second; each
  pod and gang is timed from its own creation.

Binds and creates are timed by the API server (audit.py); CPU and memory of every component are
sampled over the window (usage.py).
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Mapping

from conformance.bench import audit, figures, stage, usage, wire, workload
from conformance.impl import base as impl_base
from conformance.impl import registry as impl_registry

SCHEDULER_ONLY = "scheduler-only"
END_TO_END = "end-to-end"
STEADY = "steady"
MODES = (SCHEDULER_ONLY, END_TO_END, STEADY)
Progress = Callable[[str], None]
# How often the bench reads the audit log while it waits for the last bind; the times themselves
# come from the log, so this only decides how soon the bench notices it is done.
FOLLOW_S = 0.25


def _load() -> tuple[float, float, float]:
    return os.getloadavg()


def _own_cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def _with_client(components: list[usage.Usage], cpu_s: float) -> tuple[usage.Usage, ...]:
    """The bench's own CPU beside the components (its client shares the machine too)."""
    return (*components, usage.Usage("bench client", round(cpu_s, 2), 0, 0))


def ceiling(where: stage.Stage, pods: int, gang: int, progress: Progress) -> figures.Ceiling:
    """Pods created as fast as the client can, then every one bound round the nodes."""
    shape = workload.Shape(pods, gang, where.namespace)
    log = audit.Log(where.audit_log, where.namespace)
    sampler = usage.Sampler(where.state_dir)
    sampler.start()
    cpu0, load0, start = _own_cpu_s(), _load(), time.time()
    progress(f"bench: ceiling: creating {pods} pods with no scheduler")
    created = wire.send_all(where.endpoint, workload.pod_creates(shape))
    binds_from = time.time()
    progress("bench: ceiling: binding them")
    bound = wire.send_all(where.endpoint, workload.binds(shape, where.node_names))
    end = time.time()
    components = sampler.stop()
    cpu = _own_cpu_s() - cpu0
    log.read()
    log.close()
    create_times = [t for (resource, _), t in log.created_at.items() if resource == "pods"]
    bind_times = sorted(t - binds_from for t in log.bound_at.values())
    failed = len(wire.failures(created)) + len(wire.failures(bound))
    return figures.Ceiling(
        pods=pods,
        creates_per_s=len(create_times) / (max(create_times) - start) if create_times else 0.0,
        binds_per_s=len(bind_times) / bind_times[-1] if bind_times and bind_times[-1] > 0 else 0.0,
        failed=failed,
        bind_times_s=tuple(round(t, 4) for t in bind_times),
        components=_with_client(components, cpu),
        window=figures.Window(start, end, load0, _load()),
    )


def _held_parts(mode: str) -> tuple[str, ...]:
    if mode == SCHEDULER_ONLY:
        return (impl_base.SCHEDULER,)
    if mode == END_TO_END:
        return (impl_base.SCHEDULER, impl_base.CONTROLLER)
    return ()


def implementation(where: stage.Stage, spec: str, conf: Mapping[str, Any], shape: workload.Shape, mode: str, rate: float, timeout_s: float, progress: Progress) -> figures.Run:
    impl = impl_registry.implementation(spec)
    held = _held_parts(mode)
    if held and not isinstance(impl, impl_base.Staged):
        raise ValueError(f"--mode {mode} needs an implementation the bench can start itself (reference, volcano); {spec} cannot be held stopped: use --mode steady")
    log = audit.Log(where.audit_log, where.namespace)
    try:
        progress(f"bench: starting {impl.name}")
        impl.ensure(where.handle, conf)
        requests = workload.creates(shape)
        sampler = usage.Sampler(where.state_dir)
        if held:
            assert isinstance(impl, impl_base.Staged)
            impl.hold(held)
            progress(f"bench: {impl.name}: {', '.join(held)} held; creating {len(requests)} objects")
            created_from = time.monotonic()
            failed = wire.failures(wire.send_all(where.endpoint, requests))
            create_s = time.monotonic() - created_from
            if failed:
                raise RuntimeError(f"creating the workload: {len(failed)} requests failed; first: HTTP {failed[0].status} {failed[0].error}")
            progress(f"bench: created in {create_s:.1f}s; starting {', '.join(held)}")
            sampler.start()
            cpu0, load0, start = _own_cpu_s(), _load(), time.time()
            impl.resume()
        else:
            sampler.start()
            cpu0, load0, start = _own_cpu_s(), _load(), time.time()
            began = time.monotonic()
            progress(f"bench: {impl.name}: {shape.groups} gangs arriving at {rate:g} pods/s")
            failed = wire.failures(wire.send_all(where.endpoint, requests, release=lambda g: began + g * shape.gang / rate))
            create_s = time.monotonic() - began
            if failed:
                raise RuntimeError(f"creating the workload: {len(failed)} requests failed; first: HTTP {failed[0].status} {failed[0].error}")
        # Steady arrival takes pods/rate seconds to arrive before the deadline starts counting.
        deadline = start + timeout_s + (0.0 if held else shape.pods / rate)
        problem = _wait_binds(log, impl, shape.pods, deadline, progress)
        end = time.time()
        components = sampler.stop()
        cpu = _own_cpu_s() - cpu0
    finally:
        impl.stop()
        log.close()
    return _run(impl.name, mode, shape, log, start, figures.Window(start, end, load0, _load()), create_s, _with_client(components, cpu), problem)


def _wait_binds(log: audit.Log, impl: impl_base.Implementation, pods: int, deadline: float, progress: Progress) -> str:
    """Until every pod is bound ("" returned), the deadline passes or a process of the
    implementation exits (what happened returned)."""
    said = time.monotonic()
    while True:
        log.read()
        if len(log.bound_at) >= pods:
            return ""
        crashed = impl.health()
        if crashed:
            return crashed
        if time.time() > deadline:
            return f"only {len(log.bound_at)} of {pods} pods were bound within the deadline"
        if time.monotonic() - said > 10:
            progress(f"bench: {len(log.bound_at)} of {pods} pods bound")
            said = time.monotonic()
        time.sleep(FOLLOW_S)  # following a file: see FOLLOW_S


def _run(name: str, mode: str, shape: workload.Shape, log: audit.Log, start: float, window: figures.Window, create_s: float, components: tuple[usage.Usage, ...], problem: str) -> figures.Run:
    bound = log.bound_at
    binds = [t for t in bound.values() if t >= start]
    last = max(binds, default=start)

    def ready_at(group: int, pod: str | None) -> float:
        """When a pod (or, with None, the whole gang) could first be scheduled."""
        if mode != STEADY:
            return start
        if shape.kind == workload.JOBS:
            return log.created_at.get(("jobs", shape.group_name(group)), start)
        names = [pod] if pod is not None else shape.pod_names(group)
        return max(log.created_at.get(("pods", n), start) for n in names)

    bind_s, gang_s, partial = [], [], 0
    for g in range(shape.groups):
        names = shape.pod_names(g)
        times = [bound[n] for n in names if n in bound]
        bind_s += [bound[n] - ready_at(g, n) for n in names if n in bound]
        if len(times) == shape.gang:
            gang_s.append(max(times) - ready_at(g, None))
        elif times:
            partial += 1
    writes = sorted(log.writes(start, last).items(), key=lambda item: (-item[1], item[0].client))
    return figures.Run(
        impl=name, mode=mode, pods=shape.pods, gang=shape.gang, bound=len(bound), seconds=last - start,
        bind_s=tuple(sorted(bind_s)), gang_s=tuple(sorted(gang_s)), bound_times_s=tuple(sorted(round(t - start, 4) for t in binds)),
        partial_gangs=partial, create_s=create_s,
        components=components, writes=tuple(writes), window=window, problem=problem,
    )
