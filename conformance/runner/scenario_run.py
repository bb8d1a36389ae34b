"""One scenario from start to verdict: shape the nodes, start the implementation, observe, act, judge.

Any failure of the kit or the cluster is an error (explained, never counted against the
implementation); a step the implementation made impossible, a failed expectation or a crashed
implementation process is a failure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import time
import traceback
from typing import Callable, Iterator, Mapping

import kubernetes

from conformance import interrupts, results
from conformance.cluster import resources, workload_images
from conformance.expect import judge
from conformance.impl import base as impl_base
from conformance.observe import recorder
from conformance.runner import context, steps
from conformance.scenario import models

log = logging.getLogger(__name__)
# Every scenario sees these kinds; more could be added per scenario. HyperNode and Numatopology
# are watched where their CRDs are served (a kind that is not served is simply empty).
OBSERVED_KINDS = ("Pod", "PodGroup", "Job", "Queue", "Node", "Event", "Service", "ConfigMap", "Secret", "NetworkPolicy", "Command", "HyperNode", "Numatopology")
# Watched only by the scenarios that name them (apply them, refer to them or judge them): few
# scenarios use them, and every watched kind costs each scenario a watch.
ON_DEMAND_KINDS = ("CronJob", "JobFlow", "JobTemplate", "ResourceQuota", "PersistentVolumeClaim", "EndpointSlice")
# The kinds a predicate reads without naming them.
READ_BY_PREDICATE = {"endpoints": "EndpointSlice"}


def _kinds_named(node: object) -> Iterator[str]:
    if isinstance(node, Mapping):
        if isinstance(node.get("kind"), str):
            yield node["kind"]
        yield from (kind for key, kind in READ_BY_PREDICATE.items() if isinstance(node.get(key), Mapping))
        for value in node.values():
            yield from _kinds_named(value)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _kinds_named(value)


# The kinds a predicate reads by its own name, beside the ones its spec names.
READ_BY_KIND = {"pods": ("Pod",), "placement": ("Pod", "Node"), "ratio": ("Pod",), "event": ("Event",), "endpoints": ("EndpointSlice", "Service")}


def looked_at(spec: object) -> tuple[str, ...]:
    """The kinds of object a check reads: those its predicate (or timeline spec, or a step's
    object) names, and those its predicate reads by its kind (`pods` reads Pods). Sorted; empty
    when none is named (every kind explains it)."""
    if isinstance(spec, models.Predicate):
        named = set(_kinds_named(spec.spec)) | set(READ_BY_KIND.get(spec.kind, ()))
        if spec.kind == "every" and "objects" not in spec.spec:
            named.add("Pod")
        return tuple(sorted(named))
    return tuple(sorted(set(_kinds_named(spec))))


def _step_looked_at(step: models.Step) -> tuple[str, ...]:
    if step.expectation is not None:
        return looked_at(step.expectation.predicate or step.expectation.timeline_spec)
    return looked_at(step.spec)


def observed_kinds(sc: models.Scenario) -> tuple[str, ...]:
    """OBSERVED_KINDS, and those of ON_DEMAND_KINDS the scenario names anywhere."""
    parts: list[object] = [list(sc.setup)]
    expectations = [*(step.expectation for step in sc.steps if step.expectation is not None), *sc.expect]
    for step in sc.steps:
        # A wait's spec is its Predicate.
        parts.append({step.spec.kind: step.spec.spec} if isinstance(step.spec, models.Predicate) else step.spec)
    for expectation in expectations:
        # As {kind: spec}, as a predicate is written (and nested in `order`).
        parts.append({expectation.predicate.kind: expectation.predicate.spec} if expectation.predicate else expectation.timeline_spec)
        if expectation.since_time is not None:
            parts.append(expectation.since_time)
    named = set(_kinds_named(parts))
    return OBSERVED_KINDS + tuple(k for k in ON_DEMAND_KINDS if k in named)


class PhaseClock:
    """Seconds spent in each named phase of one scenario run (a phase entered twice adds up)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        began = time.monotonic()
        try:
            yield
        finally:
            self.spent[name] = round(self.spent.get(name, 0.0) + time.monotonic() - began, 3)


def _result(sc: models.Scenario, status: results.Status, reason: str, phases_s: dict[str, float] | None = None, **extra: object) -> results.ScenarioResult:
    """The result; its duration is the scenario's own time (the body), the kit's is in phases_s."""
    phases_s = phases_s or {}
    return results.ScenarioResult(
        id=sc.id,
        suite=sc.suite,
        title=sc.title,
        level=sc.level,
        cites=tuple(str(c) for c in sc.cites),
        requires=tuple(sorted(sc.capabilities())),
        path=str(sc.path),
        status=status,
        reason=reason,
        duration_s=round(phases_s.get(results.PHASE_BODY, 0.0), 3),
        phases_s=phases_s,
        **extra,  # type: ignore[arg-type]
    )


def not_applicable(sc: models.Scenario, implementation: impl_base.Implementation) -> str:
    """Why the scenario does not apply to this implementation's Volcano release ('' when it
    does: no range, an unknown release, or a release inside the range)."""
    release = implementation.volcano_release()
    if sc.releases is None or release is None or sc.releases.contains(release):
        return ""
    return f"applies to Volcano {sc.releases}; {implementation.name} is {release}"


def backend_gap(sc: models.Scenario, backend: str, capacity: int, images: Mapping[str, str] | None = None) -> str:
    """Why the scenario cannot run on this backend: it asks for more nodes that run containers
    (`real_nodes`) than the backend lends, for workload images the run did not prepare (only
    `vck run` builds them, and only kind can load them), or for GPUs on real nodes, which the
    kit's fake device plugin gives only on kind ('' when it can run)."""
    if sc.real_nodes > capacity:
        return f"needs {sc.real_nodes} {'nodes that run' if sc.real_nodes > 1 else 'node that runs'} containers; the {backend} backend {_lends(backend, capacity)}{_more_nodes(backend, sc.real_nodes)}"
    if not sc.real_nodes:
        return ""
    missing = sorted(workload_images.placeholders(sc.written()) - set(images or {}))
    if missing and backend == "existing":
        return f"needs the workload images {', '.join(missing)}: on an existing cluster name images its nodes can pull with --workload-images (the kit cannot load the ones it builds there)"
    if missing:
        return f"needs the workload images {', '.join(missing)}, which `vck run` builds (or takes from --workload-images); this run has none"
    if backend != "kind" and workload_images.requests_resource(sc.written(), "nvidia.com/gpu"):
        return "its containers ask for nvidia.com/gpu, which the kit's fake device plugin gives only on kind's workers; run it with --backend kind"
    return ""


def _lends(backend: str, capacity: int) -> str:
    if capacity:
        return f"lends {capacity}"
    return "lends none (its nodes are simulated)" if backend == "embedded" else "lends none"


def _more_nodes(backend: str, wanted: int) -> str:
    """How to give the scenario the real nodes it asks for."""
    if backend == "kind":
        return f"; run it with --kind-workers {wanted}"
    if backend == "existing":
        return f"; lend it {wanted} of the cluster's worker nodes with --lend-nodes {wanted}"
    return "; run it with --backend kind"


def run(sc: models.Scenario, ctx: context.RunContext, first_failure: bool = False, attempt: int = 1) -> results.ScenarioResult:
    """Run one scenario to its verdict. With `first_failure`, judging stops at the first check that
    fails (the verdict is FAILED either way; the checks after it are not judged): for proving that
    a broken build fails, where the rest of the windows would only be waited out. `attempt`: which
    run of a repeated scenario this is (`vck run --repeat`)."""
    elsewhere = not_applicable(sc, ctx.implementation) or backend_gap(sc, ctx.cluster.backend, len(ctx.cluster.real_nodes), ctx.images)
    if elsewhere:
        return _result(sc, results.Status.NOT_APPLICABLE, elsewhere, attempt=attempt)
    missing = sorted(sc.capabilities() - ctx.implementation.capabilities())
    if missing:
        return _result(sc, results.Status.NOT_CLAIMED, f"not claimed by {ctx.implementation.name}: {', '.join(missing)}", missing_capabilities=tuple(missing), attempt=attempt)
    clock = PhaseClock()
    try:
        with clock.phase("nodes"):
            ctx.prepare_nodes(sc.nodes, sc.profile, sc.real_nodes)
        with clock.phase("implementation"):
            ctx.implementation.ensure(ctx.cluster, sc.scheduler)
        with clock.phase("devices"):
            ctx.prepare_devices(sc.profile)
        with clock.phase("namespace"):
            namespace = ctx.new_namespace(sc.id)
    except Exception as err:
        log.debug("setup of %s failed", sc.id, exc_info=True)
        return _result(sc, results.Status.ERROR, f"the kit could not prepare the scenario: {err.__class__.__name__}: {err}", clock.spent, attempt=attempt)
    rec = recorder.Recorder(ctx.client, namespace, [resources.lookup(k) for k in observed_kinds(sc)])
    step_ctx = steps.StepContext(
        ctx.client, namespace, rec, ctx.time_scale, reconfigure=lambda conf: ctx.implementation.ensure(ctx.cluster, conf), add_node=ctx.add_node,
        release=ctx.implementation.volcano_release(), images=ctx.images,
    )
    checks: list[results.Check] = []
    status, reason = results.Status.PASSED, ""
    try:
        with clock.phase("observer"):
            rec.start()
        with clock.phase(results.PHASE_BODY):
            failure = _play(sc, step_ctx, rec, ctx.time_scale, checks, first_failure)
        if failure is not None:
            status, reason = results.Status.FAILED, failure
        crashed = ctx.implementation.health()
        failed = [c for c in checks if not c.passed]
        if crashed:
            status, reason = results.Status.FAILED, f"the implementation crashed: {crashed}"
        elif status is results.Status.PASSED and failed:
            status = results.Status.FAILED
            reason = f"{len(failed)} of {len(checks)} checks failed; first: {failed[0].description}: expected {failed[0].expected}; observed {failed[0].observed}"
        elif status is results.Status.PASSED and not checks:
            status, reason = results.Status.ERROR, "the scenario judged nothing (no wait, expectation or rejection check)"
        elif status is results.Status.PASSED:
            reason = f"all {len(checks)} checks passed"
    except kubernetes.client.ApiException as err:
        status, reason = results.Status.ERROR, f"the API failed the kit: HTTP {err.status} {err.reason}: {str(err.body)[:300]}"
    except Exception as err:
        log.debug("scenario %s errored", sc.id, exc_info=True)
        status, reason = results.Status.ERROR, f"the kit failed: {err.__class__.__name__}: {err}\n{traceback.format_exc(limit=3)}"
    finally:
        with clock.phase("cleanup"), interrupts.deferred() if ctx.warm else contextlib.nullcontext():
            rec.stop()
            timeline = rec.timeline()
            if any(step.action == "node" for step in sc.steps):
                # The scenario added, cordoned, tainted or deleted nodes: the next one gets fresh nodes.
                ctx.forget_nodes()
            cleanups: list[Callable[[], None]] = [lambda: ctx.delete_namespace(namespace)]
            # Newest first: a child queue goes before its parent (Volcano refuses to delete a
            # queue that has children), and one refusal does not keep the rest.
            cleanups += [functools.partial(ctx.client.delete, kind, name, None) for kind, name in reversed(step_ctx.created_cluster_objects)]
            for cleanup in cleanups:
                try:
                    cleanup()
                except Exception as err:
                    if status is not results.Status.ERROR:
                        log.warning("cleanup after %s failed: %s", sc.id, err)
    return _result(sc, status, reason, clock.spent, checks=tuple(checks), timeline=timeline, figures=dict(step_ctx.figures), attempt=attempt)


def _play(sc: models.Scenario, step_ctx: steps.StepContext, rec: recorder.Recorder, time_scale: float, checks: list[results.Check], first_failure: bool) -> str | None:
    """Apply the setup objects, run the steps, then judge the expectations that apply to the
    implementation's Volcano release, appending each check; the reason when a step made the
    scenario fail (None otherwise)."""
    current: models.Step | None = None
    try:
        steps.apply_setup(step_ctx, sc.setup)
        for step in sc.steps:
            current = step
            check = steps.run(step_ctx, step)
            if check is not None:
                checks.append(dataclasses.replace(check, looked_at=_step_looked_at(step)))
                if first_failure and not check.passed:
                    return None
        for exp in sc.expect:
            if not exp.applies_to(step_ctx.release):
                continue  # a check of another release's behaviour: left out, as its scenario would be
            check = judge.expectation(rec, exp, time_scale, step_ctx.step_ends, step_ctx.step_starts)
            checks.append(dataclasses.replace(check, looked_at=looked_at(exp.predicate or exp.timeline_spec)))
            if first_failure and not check.passed:
                return None
    except steps.StepFailed as err:
        if err.check is not None:
            checks.append(dataclasses.replace(err.check, looked_at=_step_looked_at(current) if current is not None else ()))
        return str(err)
    return None
