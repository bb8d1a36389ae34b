"""The typed scenario model, built from a document that already passed the JSON Schema.

Steps and predicates keep their spec as the YAML mapping (the schema fixed its shape); the modules
that act on them (`conformance.steps`, `conformance.expect`) read them by the documented keys.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Mapping, Sequence

from conformance import results
from conformance.cluster import nodes
from conformance.scenario import durations, profiles
from conformance.scenario import releases as releases_
from fake_devices import profile as device_profile

PREDICATE_KINDS = ("pods", "phase", "condition", "event", "object", "placement", "endpoints", "ratio", "every")
TIMELINE_KINDS = ("sequence", "order")
STEP_ACTIONS = ("apply", "patch", "delete", "wait", "end_pods", "evict_pods", "delete_pods", "node", "scale", "command", "pause", "expect", "measure", "scheduler", "remember")
# The windows of an expectation: relative to the previous verdict (within, never, throughout), or
# anchored at the moment a step finished (never_since: the whole history since; between: first
# held no sooner than FROM and no later than TO after it).
WINDOW_MODES = ("within", "never", "throughout")
ANCHORED_MODES = ("never_since", "between")
DEFAULT_WITHIN_S = 30.0
# The keys of a measure step that judge its figure (conformance.expect.figures.COMPARISONS).
MEASURE_COMPARISONS = ("less_than", "more_than", "at_most", "at_least", "equals")


@dataclasses.dataclass(frozen=True)
class Cite:
    kind: str  # seed | doc | source | issue
    ref: str
    section: str = ""

    def __str__(self) -> str:
        text = f"{self.kind}: {self.ref}"
        return f"{text} §{self.section}" if self.section else text


@dataclasses.dataclass(frozen=True)
class Predicate:
    """A statement about the cluster's state at one moment (see PREDICATE_KINDS)."""

    kind: str
    spec: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class Expectation:
    """A predicate judged over a window (within | never | throughout), or a check of the timeline."""

    mode: str  # within | never | throughout | never_since | between | timeline
    window_s: float
    describe: str
    predicate: Predicate | None = None
    # never_since and between: the step (index in `steps`) whose end anchors the window;
    # between: the earliest and latest moment after it, in seconds.
    since_step: int | None = None
    between_s: tuple[float, float] | None = None
    # between: anchored instead at a moment an observed object states (`since: {time_of: {object,
    # field}}`, a condition's lastTransitionTime, an Event's firstTimestamp).
    since_time: Mapping[str, Any] | None = None
    # For mode "timeline": sequence or order, with its spec.
    timeline_kind: str = ""
    timeline_spec: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # The Volcano releases this check applies to (`volcano: '<1.14'` on the check): outside them it
    # is left out for the implementation (a detail that changed between releases, in a scenario
    # whose behaviour did not); None: every release.
    releases: releases_.ReleaseRange | None = None

    def applies_to(self, release: str | None) -> bool:
        return self.releases is None or release is None or self.releases.contains(release)

    def label(self) -> str:
        if self.describe:
            return self.describe
        if self.predicate is not None:
            return f"{self.predicate.kind} {self.window_text()}: {json.dumps(self.predicate.spec, sort_keys=True)}"
        return f"{self.timeline_kind}: {json.dumps(self.timeline_spec, sort_keys=True)}"

    def window_text(self) -> str:
        step = f"step {self.since_step + 1}" if self.since_step is not None else ""
        if self.since_time is not None:
            step = f"the time in {self.since_time['field']} of {json.dumps(self.since_time.get('object') or self.since_time.get('objects'), sort_keys=True)}"
        if self.mode == "never_since":
            return f"never since {step}"
        if self.mode == "between" and self.between_s is not None:
            return f"between {self.between_s[0]:g}s and {self.between_s[1]:g}s after {step}"
        return f"{self.mode} {self.window_s:g}s"


@dataclasses.dataclass(frozen=True)
class Step:
    action: str
    spec: Any
    describe: str = ""
    # wait: how long to wait; apply: whether the API must refuse it, and with what message.
    within_s: float | None = None
    expect_rejection: str | None = None
    expectation: Expectation | None = None
    # apply with expect_rejection: refused within this window, each try a dry run (steps.apply_until_refused).
    refused_within_s: float | None = None

    def label(self) -> str:
        return self.describe or f"{self.action}"


@dataclasses.dataclass(frozen=True)
class Scenario:
    id: str
    suite: str
    title: str
    level: results.Level
    cites: tuple[Cite, ...]
    requires: tuple[str, ...]
    nodes: tuple[nodes.NodeGroup, ...]
    # volcano-scheduler.conf as a mapping; None: the implementation's default configuration.
    scheduler: Mapping[str, Any] | None
    setup: tuple[Mapping[str, Any], ...]
    steps: tuple[Step, ...]
    expect: tuple[Expectation, ...]
    path: pathlib.Path
    description: str = ""
    default_within_s: float = DEFAULT_WITHIN_S
    # The device profile shaping (part of) the cluster: GPUs, NUMA, supernodes, HyperNodes.
    profile: device_profile.Profile | None = None
    # The Volcano releases the scenario applies to (`volcano: '>=1.14'`); None: every release.
    releases: releases_.ReleaseRange | None = None
    # Nodes that run containers the scenario needs (`cluster: {real_nodes: 2}`): its pods run for
    # real, on the backend's real workers and on no simulated node; 0: simulated nodes only.
    real_nodes: int = 0

    def written(self) -> list[Any]:
        """The setup objects and every step's spec, as written: where the objects the scenario
        applies or patches are (what the workload images and GPU requests are looked for in)."""
        return [*self.setup, *(step.spec for step in self.steps)]

    def scheduler_confs(self) -> list[Mapping[str, Any]]:
        """Every scheduler conf the scenario runs with: its own, then those its `scheduler` steps switch to."""
        own = [self.scheduler] if self.scheduler else []
        return own + [step.spec for step in self.steps if step.action == "scheduler"]

    def scheduler_conf_names(self) -> tuple[list[str], list[str]]:
        """The actions and plugin names the scheduler confs use."""
        actions: list[str] = []
        plugins: list[str] = []
        for conf in self.scheduler_confs():
            actions += [a.strip() for a in str(conf.get("actions", "")).split(",") if a.strip() and a.strip() not in actions]
            plugins += [p["name"] for tier in conf.get("tiers") or [] for p in tier.get("plugins") or [] if isinstance(p, Mapping) and "name" in p and p["name"] not in plugins]
        return actions, plugins

    def capabilities(self) -> frozenset[str]:
        """What an implementation must claim to be judged: `requires`, and every action and plugin
        the scenario's scheduler conf names."""
        actions, plugins = self.scheduler_conf_names()
        return frozenset(self.requires) | {f"action:{a}" for a in actions} | {f"plugin:{p}" for p in plugins}

    def scheduler_key(self) -> str:
        """Equal for scenarios that can share one running implementation."""
        return json.dumps(self.scheduler, sort_keys=True) if self.scheduler else ""


def _cite(doc: Mapping[str, Any]) -> Cite:
    for kind in ("seed", "doc", "source", "issue"):
        if kind in doc:
            return Cite(kind, str(doc[kind]), str(doc.get("section", "")))
    raise ValueError(f"a cite needs one of seed, doc, source or issue, got {sorted(doc)}")


def node_group(doc: Mapping[str, Any]) -> nodes.NodeGroup:
    taints = tuple(nodes.Taint(t["key"], str(t.get("value", "")), t["effect"]) for t in doc.get("taints") or [])
    return nodes.NodeGroup(
        count=int(doc.get("count", 1)),
        cpu=str(doc.get("cpu", nodes.DEFAULT_CPU)),
        memory=str(doc.get("memory", nodes.DEFAULT_MEMORY)),
        pods=int(doc.get("pods", nodes.DEFAULT_PODS)),
        prefix=str(doc.get("prefix", nodes.DEFAULT_PREFIX)),
        labels=tuple((str(k), str(v)) for k, v in (doc.get("labels") or {}).items()),
        taints=taints,
        extended=tuple((str(k), str(v)) for k, v in (doc.get("resources") or {}).items()),
        images=tuple((tuple(str(n) for n in image["names"]), int(image["sizeBytes"])) for image in doc.get("images") or []),
    )


def _predicate_of(doc: Mapping[str, Any], kinds: tuple[str, ...]) -> tuple[str, Any]:
    found = [k for k in kinds if k in doc]
    if len(found) != 1:
        raise ValueError(f"expected exactly one of {', '.join(kinds)}, got {sorted(doc)}")
    return found[0], doc[found[0]]


def step_index(ref: Any, describes: Sequence[str]) -> int:
    """The 0-based index of the step `ref` names: its 1-based number, or its `describe` text."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        if not 1 <= ref <= len(describes):
            raise ValueError(f"there is no step {ref} (the scenario has {len(describes)})")
        return ref - 1
    matching = [i for i, text in enumerate(describes) if text == ref]
    if len(matching) != 1:
        raise ValueError(f"{len(matching)} steps are described {ref!r}; name exactly one, or give its number")
    return matching[0]


def expectation_from(doc: Mapping[str, Any], default_within_s: float, describes: Sequence[str] = ()) -> Expectation:
    expectation = _expectation_of(doc, default_within_s, describes)
    if "volcano" in doc:
        return dataclasses.replace(expectation, releases=releases_.parse(str(doc["volcano"])))
    return expectation


def _expectation_of(doc: Mapping[str, Any], default_within_s: float, describes: Sequence[str]) -> Expectation:
    describe = str(doc.get("describe", ""))
    if any(k in doc for k in TIMELINE_KINDS):
        kind, spec = _predicate_of(doc, TIMELINE_KINDS)
        return Expectation(mode="timeline", window_s=0.0, describe=describe, timeline_kind=kind, timeline_spec=spec)
    kind, spec = _predicate_of(doc, PREDICATE_KINDS)
    predicate = Predicate(kind, spec)
    modes = [m for m in (*WINDOW_MODES, *ANCHORED_MODES) if m in doc]
    if len(modes) > 1:
        raise ValueError(f"an expectation takes one of within, never, throughout, never_since or between, got {modes}")
    mode = modes[0] if modes else "within"
    if mode == "never_since":
        return Expectation(mode=mode, window_s=0.0, describe=describe, predicate=predicate, since_step=step_index(doc["never_since"], describes))
    if mode == "between":
        earliest, latest = (durations.parse(d) for d in doc["between"])
        if isinstance(doc["since"], Mapping):
            return Expectation(mode=mode, window_s=latest, describe=describe, predicate=predicate, since_time=doc["since"]["time_of"], between_s=(earliest, latest))
        return Expectation(mode=mode, window_s=latest, describe=describe, predicate=predicate, since_step=step_index(doc["since"], describes), between_s=(earliest, latest))
    window = durations.parse(doc[mode]) if modes else default_within_s
    return Expectation(mode=mode, window_s=window, describe=describe, predicate=predicate)


def step_from(doc: Mapping[str, Any], default_within_s: float, describes: Sequence[str] = ()) -> Step:
    action, spec = _predicate_of(doc, STEP_ACTIONS)
    describe = str(doc.get("describe", ""))
    if action == "wait":
        kind, pspec = _predicate_of(spec, PREDICATE_KINDS)
        within = durations.parse(doc["within"]) if "within" in doc else default_within_s
        return Step(action, Predicate(kind, pspec), describe, within_s=within)
    if action == "expect":
        return Step(action, spec, describe, expectation=expectation_from(spec, default_within_s, describes))
    if action == "pause":
        return Step(action, durations.parse(spec), describe)
    if action == "end_pods" and "after" in spec:
        durations.parse(spec["after"])
    refused_within = durations.parse(doc["refused_within"]) if "refused_within" in doc else None
    return Step(action, spec, describe, expect_rejection=doc.get("expect_rejection"), refused_within_s=refused_within)


def measure_problems(doc: Mapping[str, Any]) -> list[tuple[list[str | int], str]]:
    """What the schema cannot say about `measure` steps, with each problem's path: a comparison
    must name a figure an earlier step measured, and only a count can be compared."""
    problems: list[tuple[list[str | int], str]] = []
    measured: list[str] = []
    for i, step in enumerate(doc.get("steps") or ()):
        spec = step.get("measure") if isinstance(step, Mapping) else None
        if not isinstance(spec, Mapping):
            continue
        for key in MEASURE_COMPARISONS:
            if key not in spec:
                continue
            if "placement" in spec:
                problems.append((["steps", i, "measure", key], "a placement gives one figure per label value and cannot be compared; compare a count (fragmented_nodes)"))
            elif isinstance(spec[key], str) and spec[key] not in measured:
                problems.append((["steps", i, "measure", key], f"names the figure {spec[key]!r}, which no earlier measure step records (earlier: {', '.join(map(repr, measured)) or 'none'})"))
        measured.append(str(spec.get("figure")))
    return problems


def from_document(doc: Mapping[str, Any], path: pathlib.Path) -> Scenario:
    """The Scenario a schema-valid document describes; ValueError for what the schema cannot say."""
    timeouts = doc.get("timeouts") or {}
    default_within = durations.parse(timeouts["default_within"]) if "default_within" in timeouts else DEFAULT_WITHIN_S
    cluster = doc.get("cluster") or {}
    prof = profiles.resolve(cluster["profile"]) if "profile" in cluster else None
    groups = tuple(node_group(g) for g in cluster.get("nodes") or [])
    if "nodes" not in cluster and prof is None and "real_nodes" not in cluster:
        groups = nodes.parse(None)  # the default nodes; `nodes: []` is a cluster with none
    describes = [str(s.get("describe", "")) for s in doc.get("steps") or ()]
    steps = tuple(step_from(s, default_within, describes) for s in doc.get("steps") or ())
    return Scenario(
        id=doc["id"],
        suite=doc["suite"],
        title=doc["title"],
        level=results.Level(doc["level"]),
        cites=tuple(_cite(c) for c in doc["cites"]),
        requires=tuple(doc.get("requires") or ()),
        nodes=groups,
        scheduler=doc.get("scheduler"),
        setup=tuple(doc.get("setup") or ()),
        steps=steps,
        expect=tuple(expectation_from(e, default_within, describes) for e in doc.get("expect") or ()),
        path=path,
        description=str(doc.get("description", "")),
        default_within_s=default_within,
        profile=prof,
        releases=releases_.parse(doc["volcano"]) if "volcano" in doc else None,
        real_nodes=int(cluster.get("real_nodes", 0)),
    )
