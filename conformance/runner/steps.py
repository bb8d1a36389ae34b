"""Steps: what a scenario does to the cluster. Each returns a Check when it judged something."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
import time
import zlib
from typing import Any, Callable, Mapping, Sequence

import kubernetes

from conformance import results
from conformance.cluster import nodes, resources, workload_images
from conformance.expect import clock, figures, judge, predicates, select
from conformance.observe import recorder
from conformance.scenario import durations, models

# Added nodes take InternalIPs from this index up (nodes.node_ip), clear of the scenario's own.
ADDED_NODE_IPS = 20000


class StepFailed(Exception):
    """The implementation made a step impossible (a wait timed out, the API refused an object):
    the scenario fails with this as its reason."""

    def __init__(self, message: str, check: results.Check | None = None) -> None:
        super().__init__(message)
        self.check = check


@dataclasses.dataclass
class StepContext:
    client: resources.Client
    namespace: str
    rec: recorder.Recorder
    time_scale: float
    # Cluster-scoped objects the scenario created, deleted after it.
    created_cluster_objects: list[tuple[resources.Kind, str]] = dataclasses.field(default_factory=list)
    # Restarts the implementation's scheduler with another conf (a `scheduler` step).
    reconfigure: Callable[[Mapping[str, Any]], None] | None = None
    # The figures `measure` steps recorded, by name, for the scenario's result.
    figures: dict[str, float] = dataclasses.field(default_factory=dict)
    # Creates one kwok node from its manifest and waits until it is usable (a `node: add` step).
    add_node: Callable[[Mapping[str, Any]], None] | None = None
    # When each step finished, by index: the anchors of `never_since` and `between`.
    step_ends: list[float] = dataclasses.field(default_factory=list)
    # When each step began, by index: `between` judges from there, so a reaction the step caused
    # before the kit saw its own call return (a busy machine) is still seen, as too soon.
    step_starts: list[float] = dataclasses.field(default_factory=list)
    # The implementation's Volcano release: an `expect` step of another release's is left out.
    release: str | None = None
    # The workload images by recipe: what `image: vck.workload/<name>` in a manifest becomes.
    images: Mapping[str, str] = dataclasses.field(default_factory=dict)


def _namespaced(ctx: StepContext, manifest: Mapping[str, Any]) -> tuple[resources.Kind, dict[str, Any]]:
    kind = resources.of(manifest)
    body = workload_images.substitute(copy.deepcopy(dict(manifest)), ctx.images)
    if kind.namespaced:
        body.setdefault("metadata", {})["namespace"] = ctx.namespace
    return kind, body


def apply(ctx: StepContext, manifest: Mapping[str, Any], expect_rejection: str | None, label: str) -> results.Check | None:
    kind, body = _namespaced(ctx, manifest)
    name = body["metadata"]["name"]
    if not kind.namespaced:
        # Noted before it is sent: an interruption between the API storing it and this call
        # returning still leaves it to the scenario's cleanup (a dev session's cluster outlives
        # the run). An answer that it was not stored (4xx: refused, or there already and not the
        # scenario's) takes the note back; after a server error it may have been stored.
        ctx.created_cluster_objects.append((kind, name))
    try:
        ctx.client.create(kind, body, ctx.namespace if kind.namespaced else None)
    except kubernetes.client.ApiException as err:
        if not kind.namespaced and err.status is not None and err.status < 500:
            ctx.created_cluster_objects.remove((kind, name))
        if not _refusal(err):
            raise  # the API or the kit failed (or the object is already there): no answer of the implementation's
        message = _api_message(err)
        if expect_rejection is None:
            raise StepFailed(f"the API refused {kind.kind} {name}: HTTP {err.status}: {message}") from err
        ok = re.search(expect_rejection, message) is not None
        return results.Check(label, ok, f"{kind.kind} {name} refused with a message matching {expect_rejection!r}", f"refused: {message}", ctx.rec.now())
    if expect_rejection is not None:
        ctx.client.delete(kind, name, ctx.namespace if kind.namespaced else None)
        return results.Check(label, False, f"{kind.kind} {name} refused with a message matching {expect_rejection!r}", "the API accepted it", ctx.rec.now())
    return None


def wait(ctx: StepContext, predicate: models.Predicate, within_s: float, label: str) -> results.Check:
    """Until the predicate holds (the window stretched by the run's time scale), else the step fails."""
    check = judge.over_window(ctx.rec, predicate, "within", within_s * ctx.time_scale, label)
    if not check.passed:
        raise StepFailed(f"timed out waiting: {check.expected}; observed {check.observed}", check)
    return check


# How long a setup Queue waits for its parent (created earlier in the same setup) to be Open.
SETUP_PARENT_OPEN_S = 30.0


def apply_setup(ctx: StepContext, manifests: Sequence[Mapping[str, Any]]) -> None:
    """Create a scenario's setup objects in order. A Queue whose `spec.parent` was created earlier
    in the same setup is created once that parent is seen Open: an admission webhook judges the
    child against its own informer's copy of the parent (Volcano's queue webhook: "failed to get
    parent queue"), which a parent created a moment before may not be in yet, and every client that
    builds a hierarchy waits so. A parent that never opens fails the scenario (the implementation's
    queue controller did not open it), in the same words as a wait step."""
    queues: set[str] = set()
    for manifest in manifests:
        if manifest.get("kind") == "Queue":
            parent = (manifest.get("spec") or {}).get("parent")
            if parent in queues:
                spec = models.Predicate("phase", {"object": {"kind": "Queue", "name": parent}, "is": "Open"})
                wait(ctx, spec, SETUP_PARENT_OPEN_S, f"setup: the parent queue {parent} is Open")
            queues.add(str(manifest["metadata"]["name"]))
        apply(ctx, manifest, None, "setup")


# Between two dry runs of a `refused_within` apply: the webhook's view of other objects is not
# something the API shows, so the kit can only ask again.
REFUSAL_RETRY_S = 0.25


def apply_until_refused(ctx: StepContext, manifest: Mapping[str, Any], expect_rejection: str, window_s: float, label: str) -> results.Check:
    """`refused_within`: send the object as a server-side dry run (admission judges it, nothing is
    stored) until the API refuses it or the window ends, then judge the refusal's message. For a
    rule an admission webhook judges against its informer's view of other objects (Volcano's queue
    webhook lists queues from its lister), which may not yet hold one created a moment before."""
    kind, body = _namespaced(ctx, manifest)
    name = body["metadata"]["name"]
    expected = f"{kind.kind} {name} refused within {window_s:g}s with a message matching {expect_rejection!r}"
    deadline = ctx.rec.now() + window_s
    attempts = 0
    while True:
        attempts += 1
        try:
            ctx.client.create(kind, body, ctx.namespace if kind.namespaced else None, dry_run=True)
        except kubernetes.client.ApiException as err:
            if not _refusal(err):
                raise  # the API or the kit failed: no answer of the implementation's
            message = _api_message(err)
            after = f" (dry run {attempts}, after {attempts - 1} accepted)" if attempts > 1 else ""
            return results.Check(label, re.search(expect_rejection, message) is not None, expected, f"refused{after}: {message}", ctx.rec.now())
        if ctx.rec.now() >= deadline:
            return results.Check(label, False, expected, f"the API accepted it {attempts} times in {window_s:g}s (each a dry run)", ctx.rec.now())
        with ctx.rec.cond:
            ctx.rec.cond.wait(min(REFUSAL_RETRY_S, max(0.0, deadline - ctx.rec.now())))


def refusable(ctx: StepContext, change: Callable[[], object], what: str, expect_rejection: str | None, label: str) -> results.Check | None:
    """Make a change the API may refuse. A refusal is the implementation's answer: with
    `expect_rejection` it is judged against the regex, without it the scenario fails (the step
    could not be done), never a kit error. With `expect_rejection`, a change that was made is a
    failed check."""
    expected = f"{what} refused with a message matching {expect_rejection!r}"
    try:
        change()
    except kubernetes.client.ApiException as err:
        if not _refusal(err):
            raise  # the API or the kit failed (or the object is not there): no answer of the implementation's
        message = _api_message(err)
        if expect_rejection is None:
            raise StepFailed(f"the API refused {what}: HTTP {err.status}: {message}") from err
        return results.Check(label, re.search(expect_rejection, message) is not None, expected, f"refused: {message}", ctx.rec.now())
    if expect_rejection is not None:
        return results.Check(label, False, expected, "the API accepted it", ctx.rec.now())
    return None


def _refusal(err: kubernetes.client.ApiException) -> bool:
    """Whether the API's error is a refusal of the object (admission, a CRD's schema: 400, 403,
    422...), which is the implementation's answer; a server error, a missing kind or object (404),
    one already there (409) or a failed login (401) is not."""
    return err.status is not None and err.status < 500 and err.status not in (401, 404, 409)


def _api_message(err: kubernetes.client.ApiException) -> str:
    try:
        return str(json.loads(err.body or "").get("message", err.body))
    except (TypeError, ValueError):
        return str(err.body or err.reason)


def _object_name(ctx: StepContext, ref: Mapping[str, Any]) -> tuple[resources.Kind, str]:
    kind = resources.lookup(ref["kind"], ref.get("apiVersion"))
    if "name" in ref:
        return kind, ref["name"]
    try:
        with ctx.rec.cond:
            obj = select.resolve(ctx.rec.view(), ref)
    except select.Ambiguous as err:
        raise StepFailed(str(err)) from err
    if obj is None:
        raise StepFailed(f"{select.describe_ref(ref)} does not exist")
    return kind, obj["metadata"]["name"]


def _selected_pods(ctx: StepContext, spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    with ctx.rec.cond:
        pods = select.pods(ctx.rec.view(), spec.get("select"))
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    count = spec.get("count")
    if count is not None:
        if len(live) < count:
            raise StepFailed(f"{count} pods matching {json.dumps(spec.get('select'))} were wanted, {len(live)} exist")
        live = live[:count]
    if not live:
        raise StepFailed(f"no pod matches {json.dumps(spec.get('select'))}")
    return live


def _started_at(pod: Mapping[str, Any]) -> float | None:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    started = ((statuses[0].get("state") or {}).get("running") or {}).get("startedAt") if statuses else None
    return clock.epoch_of(started) if started else None


def end_pods(ctx: StepContext, spec: Mapping[str, Any]) -> None:
    """Annotate pods so the cluster's pod stages end them: `after` counts from now, not from start."""
    delay = durations.parse(spec["after"]) * ctx.time_scale if "after" in spec else 0.0
    for pod in _selected_pods(ctx, spec):
        annotations = {"conformance.vck.io/end": spec["outcome"]}
        if "exit_code" in spec:
            annotations["conformance.vck.io/exit-code"] = str(spec["exit_code"])
        started = _started_at(pod)
        after = delay + (time.time() - started if started is not None else 0.0)
        if after > 0:
            annotations["conformance.vck.io/after"] = f"{math.ceil(after)}s"
        ctx.client.patch(select.POD, pod["metadata"]["name"], ctx.namespace, {"metadata": {"annotations": annotations}})


def run(ctx: StepContext, step: models.Step) -> results.Check | None:
    """Take one step; the moment it finished is noted for the expectations anchored at it."""
    ctx.step_starts.append(ctx.rec.now())
    check = _take(ctx, step)
    ctx.step_ends.append(ctx.rec.now())
    return check


def _take(ctx: StepContext, step: models.Step) -> results.Check | None:
    label = step.label()
    ctx.rec.mark(label, {"action": step.action})
    spec = step.spec
    if step.action == "apply":
        label = label if step.describe else f"apply {spec['kind']} {spec['metadata']['name']}"
        if step.refused_within_s is not None and step.expect_rejection is not None:
            return apply_until_refused(ctx, spec, step.expect_rejection, step.refused_within_s * ctx.time_scale, label)
        return apply(ctx, spec, step.expect_rejection, label)
    if step.action == "patch":
        kind, name = _object_name(ctx, spec["object"])
        namespace = ctx.namespace if kind.namespaced else None
        return refusable(ctx, lambda: ctx.client.patch(kind, name, namespace, spec["patch"], spec.get("type")), f"the patch of {kind.kind} {name}", step.expect_rejection, label)
    if step.action == "delete":
        kind, name = _object_name(ctx, spec)
        namespace = ctx.namespace if kind.namespaced else None
        return refusable(ctx, lambda: ctx.client.delete(kind, name, namespace), f"the deletion of {kind.kind} {name}", step.expect_rejection, label)
    if step.action == "scale":
        return refusable(ctx, lambda: _scale(ctx, spec), f"scaling job {spec['job']} task {spec['task']} to {spec['replicas']}", step.expect_rejection, label)
    elif step.action == "wait":
        assert step.within_s is not None
        return wait(ctx, spec, step.within_s, label if step.describe else f"wait for {predicates.expected_text(spec)}")
    elif step.action == "expect":
        assert step.expectation is not None
        if not step.expectation.applies_to(ctx.release):
            return None
        return judge.expectation(ctx.rec, step.expectation, ctx.time_scale, ctx.step_ends, ctx.step_starts)
    elif step.action == "end_pods":
        end_pods(ctx, spec)
    elif step.action == "evict_pods":
        for pod in _selected_pods(ctx, spec):
            name = pod["metadata"]["name"]
            ctx.client.core.create_namespaced_pod_eviction(name, ctx.namespace, resources.as_model({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": ctx.namespace}}))
    elif step.action == "delete_pods":
        for pod in _selected_pods(ctx, spec):
            ctx.client.delete(select.POD, pod["metadata"]["name"], ctx.namespace)
    elif step.action == "node":
        _node(ctx, spec)
    elif step.action == "command":
        _command(ctx, spec)
    elif step.action == "pause":
        _pause(ctx, float(spec) * ctx.time_scale)
    elif step.action == "measure":
        return measure(ctx, spec, label)
    elif step.action == "scheduler":
        if ctx.reconfigure is None:
            raise StepFailed("this run cannot change the scheduler's conf mid-scenario")
        ctx.reconfigure(spec)
    elif step.action == "remember":
        remember(ctx, spec)
    return None


def remember(ctx: StepContext, spec: Mapping[str, Any]) -> None:
    """Note a field's value now, under a name later checks compare with (`same_as`,
    `differs_from`): one object's value, or one per selected object, by name (pods narrowed by
    `phase` and `bound` as in a check)."""
    path = spec["field"]
    with ctx.rec.cond:
        view = ctx.rec.view()
        try:
            if "object" in spec:
                obj = select.resolve(view, spec["object"])
                if obj is None:
                    raise StepFailed(f"cannot remember {path} of {select.describe_ref(spec['object'])}: it does not exist")
                chosen, what = [obj], select.describe_ref(spec["object"])
            elif "objects" in spec:
                chosen, what = list(select.objects(view, spec["objects"])), select.describe_selection(spec["objects"])
            else:
                # `phase` and `bound` narrow the pods, as in a `pods` or `every` check.
                chosen = list(predicates.matching_pods(view, spec))
                narrowed = {k: spec[k] for k in ("phase", "bound") if k in spec}
                what = f"pods matching {json.dumps(spec['select'])}" + (f" and {json.dumps(narrowed)}" if narrowed else "")
        except select.Ambiguous as err:
            raise StepFailed(f"cannot remember {path}: {err}") from err
        if not chosen:
            raise StepFailed(f"cannot remember {path} of {what}: nothing matches")
        values = {o["metadata"]["name"]: select.field(o, path) for o in chosen}
        absent = sorted(name for name, value in values.items() if select.missing(value))
        if absent:
            raise StepFailed(f"cannot remember {path}: {', '.join(absent[:5])} {'has' if len(absent) == 1 else 'have'} no such field")
        source = f"{path} of {what}"
        if "object" in spec:
            ctx.rec.memory[spec["as"]] = recorder.Remembered(source, single=next(iter(values.values())))
        else:
            ctx.rec.memory[spec["as"]] = recorder.Remembered(source, per_name=values)
    ctx.rec.mark(f"remembered {spec['as']}", {"remembered": {spec["as"]: values}})


def measure(ctx: StepContext, spec: Mapping[str, Any], label: str) -> results.Check | None:
    """Record a figure from the state observed now; judge it when the step names a bound (a
    number or an earlier figure's name)."""
    measured = figures.measure(ctx.rec.view(), spec)
    ctx.figures.update(measured.values)
    ctx.rec.mark(f"measured {spec['figure']}", {"figures": measured.values})
    compared = [key for key in figures.COMPARISONS if key in spec]
    if not compared:
        return None
    value = measured.values[spec["figure"]]
    key = compared[0]
    text, holds = figures.COMPARISONS[key]
    bound = spec[key]
    if isinstance(bound, str):
        bound_text = f"{text} {bound!r} ({ctx.figures[bound]:g})"
        bound = ctx.figures[bound]
    else:
        bound_text = f"{text} {bound:g}"
    description = label if label != "measure" else f"measure {spec['figure']}"
    return results.Check(description, bool(holds(value, bound)), f"{spec['figure']}: {bound_text}", f"{value:g}; {measured.detail}", ctx.rec.now())


def _node(ctx: StepContext, spec: Mapping[str, Any]) -> None:
    node = resources.lookup("Node")
    name, action = spec["name"], spec["action"]
    if action == "add":
        if ctx.add_node is None:
            raise StepFailed("this run cannot add nodes")
        with ctx.rec.cond:
            if ctx.rec.view().named(node, name) is not None:
                raise StepFailed(f"cannot add node {name}: a node of that name exists already")
        group = models.node_group({k: v for k, v in spec.items() if k not in ("name", "action")})
        # An address of its own, away from the numbered nodes' (documentation data only).
        ctx.add_node(nodes.kwok_node(name, group, ADDED_NODE_IPS + zlib.crc32(name.encode()) % ADDED_NODE_IPS))
    elif action in ("cordon", "uncordon"):
        ctx.client.patch(node, name, None, {"spec": {"unschedulable": action == "cordon"}})
    elif action in ("taint", "untaint"):
        current = ctx.client.get(node, name, None)
        taints = list((current.get("spec") or {}).get("taints") or [])
        if action == "taint":
            taints.append(dict(spec["taint"]))
        else:
            gone = [t for t in taints if _same_taint(t, spec["taint"])]
            if not gone:
                raise StepFailed(f"node {name} has no taint {json.dumps(spec['taint'])} to remove (its taints: {json.dumps(taints)})")
            taints = [t for t in taints if not _same_taint(t, spec["taint"])]
        ctx.client.patch(node, name, None, {"spec": {"taints": taints}})
    else:
        ctx.client.delete(node, name, None)


def _same_taint(taint: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """A taint `untaint` removes: the same key and effect, and the same value when one is given."""
    return bool(taint.get("key") == wanted["key"] and taint.get("effect") == wanted["effect"] and ("value" not in wanted or taint.get("value", "") == wanted["value"]))


def _scale(ctx: StepContext, spec: Mapping[str, Any]) -> None:
    job = resources.lookup("Job")
    current = ctx.client.get(job, spec["job"], ctx.namespace)
    tasks = current["spec"]["tasks"]
    if not any(t.get("name") == spec["task"] for t in tasks):
        raise StepFailed(f"job {spec['job']} has no task {spec['task']} (tasks: {[t.get('name') for t in tasks]})")
    for task in tasks:
        if task.get("name") == spec["task"]:
            task["replicas"] = spec["replicas"]
    ctx.client.patch(job, spec["job"], ctx.namespace, {"spec": {"tasks": tasks}})


def _command(ctx: StepContext, spec: Mapping[str, Any]) -> None:
    """A bus Command, as vcctl issues it: its target is the Job (or Queue) by owner reference."""
    if "job" in spec:
        target_kind = resources.lookup("Job")
        target = ctx.client.get(target_kind, spec["job"], ctx.namespace)
    else:
        target_kind = resources.lookup("Queue")
        target = ctx.client.get(target_kind, spec["queue"], None)
    name = target["metadata"]["name"]
    body = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {
            "generateName": f"{name}-{spec['action'].lower()}-",
            "namespace": ctx.namespace,
            "ownerReferences": [{"apiVersion": target_kind.api_version, "kind": target_kind.kind, "name": name, "uid": target["metadata"]["uid"], "controller": True}],
        },
        "action": spec["action"],
        "target": {"apiVersion": target_kind.api_version, "kind": target_kind.kind, "name": name, "uid": target["metadata"]["uid"]},
    }
    ctx.client.create(resources.lookup("Command"), body, ctx.namespace)


def _pause(ctx: StepContext, seconds: float) -> None:
    """An explicit pause the scenario asks for (not synchronisation): the observer keeps recording."""
    deadline = ctx.rec.now() + seconds
    with ctx.rec.cond:
        while (remaining := deadline - ctx.rec.now()) > 0:
            ctx.rec.cond.wait(remaining)
