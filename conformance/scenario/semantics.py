"""What a scenario means, checked at load time: the rules the JSON Schema cannot say (it owns the
shapes). Each check reads the document defensively, so it runs beside the schema's own problems and
a file's every problem is reported at once; a part of the wrong shape is left to the schema.

A finding is a path in the document and a message (what was expected, what was found, the closest
known name where one is near); the loader adds the file and the line. The sections follow the rows
of issue 15.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from typing import Any, Iterator, Mapping, Sequence

from conformance.cluster import resources
from conformance.scenario import capabilities, durations, models, phases, releases

Path = tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class Finding:
    path: Path
    message: str
    warning: bool = False  # a warning is shown but refuses nothing


def closest(word: str, known: Sequence[str]) -> str:
    """`; did you mean X?` for the known word nearest `word` (case aside), or nothing."""
    by_folded = {k.casefold(): k for k in known}
    match = difflib.get_close_matches(word.casefold(), list(by_folded), n=1, cutoff=0.6)
    return f"; did you mean {by_folded[match[0]]}?" if match else ""


def got(value: Any) -> str:
    return json.dumps(value, default=str)


# --- where things sit in a scenario -------------------------------------------------------------------
def _items(doc: Any, key: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The mappings of the list `doc[key]`, with their indices (anything else is the schema's)."""
    value = doc.get(key) if isinstance(doc, Mapping) else None
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, Mapping):
                yield i, item


def _predicates_in(doc: Any, at: Path) -> Iterator[tuple[Path, str, Mapping[str, Any]]]:
    if not isinstance(doc, Mapping):
        return
    for kind in models.PREDICATE_KINDS:
        spec = doc.get(kind)
        if isinstance(spec, Mapping):
            yield (*at, kind), kind, spec
    order = doc.get("order")
    if isinstance(order, Mapping):
        for key in ("first", "then"):
            yield from _predicates_in(order.get(key), (*at, "order", key))


def expectations(doc: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Every expectation: the scenario's `expect` and its `expect` steps."""
    for i, step in _items(doc, "steps"):
        if isinstance(step.get("expect"), Mapping):
            yield ("steps", i, "expect"), step["expect"]
    for i, exp in _items(doc, "expect"):
        yield ("expect", i), exp


def predicates(doc: Mapping[str, Any]) -> Iterator[tuple[Path, str, Mapping[str, Any]]]:
    """Every predicate (path to its spec, its kind, the spec): in waits, in expectations, in orders."""
    for i, step in _items(doc, "steps"):
        yield from _predicates_in(step.get("wait"), ("steps", i, "wait"))
    for at, exp in expectations(doc):
        yield from _predicates_in(exp, at)


def sequences(doc: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    for at, exp in expectations(doc):
        if isinstance(exp.get("sequence"), Mapping):
            yield (*at, "sequence"), exp["sequence"]


def _kind_of(ref: Any) -> resources.Kind | None:
    """The kind an object reference or manifest names, when the kit knows it."""
    if not isinstance(ref, Mapping) or not isinstance(ref.get("kind"), str):
        return None
    api_version = ref.get("apiVersion")
    try:
        return resources.lookup(ref["kind"], api_version if isinstance(api_version, str) and api_version else None)
    except resources.UnknownKind:
        return None


# --- 1. phases --------------------------------------------------------------------------------------
def _kind_text(kind: resources.Kind) -> str:
    return "Volcano Job" if (kind.api_version, kind.kind) == ("batch.volcano.sh/v1alpha1", "Job") else kind.kind


def _phase_values(spec: Mapping[str, Any], at: Path, keys: Sequence[str]) -> Iterator[tuple[Path, str]]:
    for key in keys:
        value = spec.get(key)
        if isinstance(value, str):
            yield (*at, key), value
        elif isinstance(value, list):
            yield from (((*at, key, i), v) for i, v in enumerate(value) if isinstance(v, str))


def _phase_findings(spec: Mapping[str, Any], at: Path, keys: Sequence[str]) -> list[Finding]:
    kind = _kind_of(spec.get("object"))
    if kind is None:
        return []  # an unknown kind is reported as such
    known = phases.of(kind.api_version, kind.kind)
    values = list(_phase_values(spec, at, keys))
    if not known:
        shown = kind.kind if resources.lookup(kind.kind) == kind else f"{kind.api_version} {kind.kind}"
        return [Finding((*at, "object", "kind"), f"expected a kind with a phase ({', '.join(phases.with_phases())}), got {shown}, which has none")] if values else []
    return [
        Finding(path, f"expected a phase of a {_kind_text(kind)} ({', '.join(known)}), got {got(value)}{closest(value, known)}")
        for path, value in values
        if value not in known
    ]


def phase_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """`phase` predicates and `sequence` checks name phases their object's kind has."""
    out: list[Finding] = []
    for at, kind, spec in predicates(doc):
        if kind == "phase":
            out += _phase_findings(spec, at, ("is", "in"))
    for at, spec in sequences(doc):
        out += _phase_findings(spec, at, ("phases", "without", "never_after"))
    return out


# --- 2. regular expressions ---------------------------------------------------------------------------
def _regex_finding(value: Any, at: Path) -> list[Finding]:
    if not isinstance(value, str):
        return []
    try:
        re.compile(value)
    except re.error as err:
        return [Finding(at, f"expected a regular expression, got {got(value)}: {err}")]
    return []


def _name_patterns(node: Any, at: Path) -> Iterator[tuple[Path, Any]]:
    """Every `name_matches` in a part of a step or expectation (references, selections, pod
    selectors), anywhere in it."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "name_matches":
                yield (*at, key), value
            else:
                yield from _name_patterns(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _name_patterns(value, (*at, i))


def regex_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Every regular expression the kit searches with compiles (Python's `re`, as the judge uses):
    condition and event messages, `{matches: ...}` field values, `expect_rejection`, names
    selected by `name_matches` (the objects a scenario applies are not searched for them)."""
    out: list[Finding] = []
    for i, step in _items(doc, "steps"):
        for key, part in step.items():
            if key not in ("apply", "patch"):
                out += [f for path, value in _name_patterns(part, ("steps", i, key)) for f in _regex_finding(value, path)]
            elif key == "patch" and isinstance(part, Mapping):
                out += [f for path, value in _name_patterns(part.get("object"), ("steps", i, key, "object")) for f in _regex_finding(value, path)]
    for j, exp in _items(doc, "expect"):
        out += [f for path, value in _name_patterns(exp, ("expect", j)) for f in _regex_finding(value, path)]
    for i, step in _items(doc, "steps"):
        out += _regex_finding(step.get("expect_rejection"), ("steps", i, "expect_rejection"))
    for at, kind, spec in predicates(doc):
        if kind in ("condition", "event"):
            out += _regex_finding(spec.get("message"), (*at, "message"))
        elif kind in ("object", "every") and isinstance(spec.get("fields"), Mapping):
            for field, want in spec["fields"].items():
                if isinstance(want, Mapping):
                    out += _regex_finding(want.get("matches"), (*at, "fields", field, "matches"))
    return out


# --- 3. windows -----------------------------------------------------------------------------------------
WINDOW_KEYS = ("within", "never", "throughout")


def _window_finding(value: Any, at: Path) -> list[Finding]:
    try:
        seconds = durations.parse(value)
    except ValueError:
        return []  # not a duration: the schema says so
    return [] if seconds > 0 else [Finding(at, f"expected a window longer than 0s, got {got(value)}")]


def window_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Windows are positive: a `within` or wait of no time fails at once, a `never` or `throughout`
    of no time passes without looking. (A negative one is no duration: the schema's.)"""
    out: list[Finding] = []
    timeouts = doc.get("timeouts")
    if isinstance(timeouts, Mapping):
        out += _window_finding(timeouts.get("default_within"), ("timeouts", "default_within"))
    for i, step in _items(doc, "steps"):
        if "wait" in step:
            out += _window_finding(step.get("within"), ("steps", i, "within"))
        if "refused_within" in step:
            out += _window_finding(step.get("refused_within"), ("steps", i, "refused_within"))
            if "expect_rejection" not in step:
                # Without a refusal to wait for there is nothing to try again: each try is a dry run.
                out.append(Finding(("steps", i, "refused_within"), "refused_within needs expect_rejection (the message the API's refusal must match)"))
    for at, exp in expectations(doc):
        for key in WINDOW_KEYS:
            out += _window_finding(exp.get(key), (*at, key))
    return out


# --- 4. kinds ----------------------------------------------------------------------------------------
def object_refs(doc: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Every reference to one object (`{kind, name}` or `{kind, job}`) and every manifest applied:
    the kit looks each kind up (conformance.cluster.resources) to read or write it."""
    for i, manifest in _items(doc, "setup"):
        yield ("setup", i), manifest
    for i, step in _items(doc, "steps"):
        if isinstance(step.get("apply"), Mapping):
            yield ("steps", i, "apply"), step["apply"]
        if isinstance(step.get("patch"), Mapping) and isinstance(step["patch"].get("object"), Mapping):
            yield ("steps", i, "patch", "object"), step["patch"]["object"]
        if isinstance(step.get("delete"), Mapping):
            yield ("steps", i, "delete"), step["delete"]
        remember = step.get("remember")
        if isinstance(remember, Mapping):
            for key in ("object", "objects"):
                if isinstance(remember.get(key), Mapping):
                    yield ("steps", i, "remember", key), remember[key]
    for at, kind, spec in predicates(doc):
        if kind in ("phase", "condition", "event", "object") and isinstance(spec.get("object"), Mapping):
            yield (*at, "object"), spec["object"]
        if kind == "every" and isinstance(spec.get("objects"), Mapping):
            yield (*at, "objects"), spec["objects"]
    for at, spec in sequences(doc):
        if isinstance(spec.get("object"), Mapping):
            yield (*at, "object"), spec["object"]
    for at, exp in expectations(doc):
        since = exp.get("since")
        time_of = since.get("time_of") if isinstance(since, Mapping) else None
        for key in ("object", "objects"):
            if isinstance(time_of, Mapping) and isinstance(time_of.get(key), Mapping):
                yield (*at, "since", "time_of", key), time_of[key]


def _kind_finding(ref: Mapping[str, Any], at: Path) -> list[Finding]:
    kind, api_version = ref.get("kind"), ref.get("apiVersion")
    if not isinstance(kind, str) or not kind or (api_version is not None and not isinstance(api_version, str)):
        return []  # the schema's
    names = sorted({k.kind for k in resources.KINDS})
    if kind not in names:
        return [Finding((*at, "kind"), f"expected a kind the kit knows ({', '.join(names)}), got {got(kind)}{closest(kind, names)}")]
    versions = [k.api_version for k in resources.KINDS if k.kind == kind]
    if api_version and api_version not in versions:
        return [Finding((*at, "apiVersion"), f"expected an apiVersion the kit knows for {kind} ({', '.join(versions)}), got {got(api_version)}{closest(api_version, versions)}")]
    return []


def kind_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Kinds the kit must look up are kinds it knows; else the run ends in an error."""
    out: list[Finding] = []
    for at, ref in object_refs(doc):
        out += _kind_finding(ref, at)
    return out


# --- 5. quantities ------------------------------------------------------------------------------------
# Kubernetes' quantity: a signed decimal number, then a binary (Ki..Ei) or decimal (n, u, m, k..E)
# suffix or a decimal exponent (e3, E-2). Upstream: apimachinery pkg/api/resource/quantity.go.
_NUMBER = r"([0-9]+(\.[0-9]*)?|\.[0-9]+)"
KUBERNETES_QUANTITY = re.compile(rf"^[+-]?{_NUMBER}(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?{_NUMBER})?$")
CONTAINER_LISTS = ("containers", "initContainers")


def _containers(node: Any, at: Path) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Every container of every pod spec inside a manifest (a Pod's, a Job task's template, ...)."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in CONTAINER_LISTS and isinstance(value, list):
                yield from (((*at, key, i), c) for i, c in enumerate(value) if isinstance(c, Mapping))
            else:
                yield from _containers(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _containers(value, (*at, i))


def quantity_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Container requests and limits in the manifests the scenario applies are quantities: the API
    would refuse the object and the scenario would fail for the typo. (Node shapes are checked by
    the schema; an apply that expects a rejection may hold anything.)"""
    manifests: list[tuple[Path, Mapping[str, Any]]] = [(("setup", i), m) for i, m in _items(doc, "setup")]
    manifests += [(("steps", i, "apply"), s["apply"]) for i, s in _items(doc, "steps") if isinstance(s.get("apply"), Mapping) and "expect_rejection" not in s]
    out: list[Finding] = []
    for at, manifest in manifests:
        for cat, container in _containers(manifest, at):
            res = container.get("resources")
            for part in ("requests", "limits"):
                values = res.get(part) if isinstance(res, Mapping) else None
                for name, value in (values.items() if isinstance(values, Mapping) else ()):
                    if isinstance(value, bool) or not (isinstance(value, (int, float)) or (isinstance(value, str) and KUBERNETES_QUANTITY.match(value))):
                        out.append(Finding((*cat, "resources", part, name), f"expected a Kubernetes quantity such as 8, 500m, 32Gi or 1e3, got {got(value)}"))
    return out


# --- 6. a scenario judges something -------------------------------------------------------------------
def _judges(step: Mapping[str, Any]) -> bool:
    measure = step.get("measure")
    return (
        "wait" in step
        or "expect" in step
        or "expect_rejection" in step
        or (isinstance(measure, Mapping) and any(key in measure for key in models.MEASURE_COMPARISONS))
    )


def nothing_judged(doc: Mapping[str, Any]) -> list[Finding]:
    """A scenario that judges nothing can only end in an error; refused. Asked of a document the
    schema found sound (a misspelt step or expectation would be reported twice)."""
    if any(True for _ in _items(doc, "expect")) or any(_judges(step) for _, step in _items(doc, "steps")):
        return []
    at: Path = ("expect",) if "expect" in doc else ("steps",)
    return [Finding(at, "the scenario judges nothing: expected an `expect` entry, a `wait` step, an `expect` step, an `apply`, `patch`, `delete` or `scale` step with `expect_rejection` or a `measure` step with a comparison; its run could only end in an error")]


# --- 7. capabilities (warnings) -------------------------------------------------------------------------
UNCLAIMED = "only a warning: an implementation may claim it; one that does not reports the scenario not claimed"


def _conf_findings(conf: Mapping[str, Any], at: Path) -> list[Finding]:
    out: list[Finding] = []
    actions = capabilities.known_of("action")
    if isinstance(conf.get("actions"), str):
        for action in (a.strip() for a in conf["actions"].split(",")):
            if action and action not in actions:
                out.append(Finding((*at, "actions"), f"expected scheduler actions the kit knows, got {got(action)}{closest(action, actions)} ({UNCLAIMED})", warning=True))
    plugins = capabilities.known_of("plugin")
    for t, tier in _items(conf, "tiers"):
        for p, plugin in _items(tier, "plugins"):
            name = plugin.get("name")
            if isinstance(name, str) and name not in plugins:
                out.append(Finding((*at, "tiers", t, "plugins", p, "name"), f"expected a scheduler plugin the kit knows, got {got(name)}{closest(name, plugins)} ({UNCLAIMED})", warning=True))
    return out


def capability_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Warnings for capability names no capability file the kit ships knows (conformance.scenario.
    capabilities): in `requires`, and the actions and plugins of the scheduler confs."""
    out: list[Finding] = []
    known = sorted(capabilities.known())
    requires = doc.get("requires")
    for i, name in enumerate(requires if isinstance(requires, list) else ()):
        if isinstance(name, str) and name not in known:
            out.append(Finding(("requires", i), f"expected a capability the kit knows, got {got(name)}{closest(name, known)} ({UNCLAIMED})", warning=True))
    if isinstance(doc.get("scheduler"), Mapping):
        out += _conf_findings(doc["scheduler"], ("scheduler",))
    for i, step in _items(doc, "steps"):
        if isinstance(step.get("scheduler"), Mapping):
            out += _conf_findings(step["scheduler"], ("steps", i, "scheduler"))
    return out


def release_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """A release range reads as one (`volcano: '>=1.14'`)."""
    value = doc.get("volcano")
    if not isinstance(value, str):
        return []  # absent, or not a string: the schema says so
    try:
        releases.parse(value)
    except ValueError as err:
        return [Finding(("volcano",), str(err))]
    return []


def real_node_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """A scenario on real nodes has no simulated one: the scheduler would place its pods on kwok
    nodes, where no container runs."""
    cluster = doc.get("cluster")
    if not isinstance(cluster, Mapping) or "real_nodes" not in cluster:
        return []
    out = []
    if cluster.get("nodes"):
        out.append(Finding(("cluster", "nodes"), f"expected no simulated nodes beside real_nodes, got {got(cluster.get('nodes'))}: leave nodes out"))
    if "profile" in cluster:
        out.append(Finding(("cluster", "profile"), "expected no device profile beside real_nodes: a profile's nodes are simulated"))
    for i, step in _items(doc, "steps"):
        if "node" in step:
            out.append(Finding(("steps", i, "node"), "expected no node step beside real_nodes: a node it adds is simulated, and a real node is not the scenario's to change"))
    return out


def patch_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """A JSON Patch (an array) goes with `type: json`, and `type: json` with an array; a strategic
    merge patch only for core kinds, which are the only ones that know it."""
    out: list[Finding] = []
    for i, step in _items(doc, "steps"):
        spec = step.get("patch")
        if not isinstance(spec, Mapping):
            continue
        body, kind = spec.get("patch"), spec.get("type")
        at: Path = ("steps", i, "patch", "patch")
        if isinstance(body, list) and kind != "json":
            out.append(Finding(at, "a JSON Patch (a list of operations) needs `type: json`"))
        elif isinstance(body, Mapping) and kind == "json":
            out.append(Finding(at, "`type: json` needs a JSON Patch: a list of operations ({op, path, value})"))
        ref = spec.get("object")
        if kind == "strategic" and isinstance(ref, Mapping) and isinstance(ref.get("kind"), str):
            try:
                found = resources.lookup(ref["kind"])
            except resources.UnknownKind:
                continue  # kind_findings says so
            if found.group.endswith("volcano.sh"):
                out.append(Finding(("steps", i, "patch", "type"), f"{ref['kind']} is a custom kind: the API server takes no strategic merge patch for it (use merge or json)"))
    return out


def count_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """An `every` whose `max` is below its `min` can never hold; a `remember` narrows by `phase`
    or `bound` only the pods of a `select`."""
    out: list[Finding] = []
    for i, step in _items(doc, "steps"):
        spec = step.get("remember")
        if isinstance(spec, Mapping) and "select" not in spec:
            out += [Finding(("steps", i, "remember", key), f"`{key}` narrows the pods of a `select`; this remember has none") for key in ("phase", "bound") if key in spec]
    for at, kind, spec in predicates(doc):
        if kind == "every" and isinstance(spec.get("max"), int) and spec["max"] < spec.get("min", 1):
            out.append(Finding((*at, "max"), f"max {spec['max']} is below min {spec.get('min', 1)}: the check can never hold"))
    return out


def boundary_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """A `past_boundary` whose `at_most` is not below its `every` holds for any time: it judges
    nothing."""
    out: list[Finding] = []
    for at, kind, spec in predicates(doc):
        fields = spec.get("fields") if kind in ("object", "every") else None
        for field, want in (fields or {}).items() if isinstance(fields, Mapping) else ():
            boundary = want.get("past_boundary") if isinstance(want, Mapping) else None
            if not isinstance(boundary, Mapping):
                continue
            try:
                every, at_most = durations.parse(str(boundary["every"])), durations.parse(str(boundary["at_most"]))
            except (ValueError, TypeError, KeyError):
                continue  # the schema's
            if at_most >= every:
                out.append(Finding((*at, "fields", field, "past_boundary"), f"expected at_most below every, got every {got(boundary.get('every'))} and at_most {got(boundary.get('at_most'))}: any time is at most that far past a boundary"))
    return out


CHECKS = (phase_findings, regex_findings, window_findings, kind_findings, quantity_findings, capability_findings, release_findings, real_node_findings, patch_findings, count_findings, boundary_findings)


def findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Every semantic problem (and warning) of a scenario document; `nothing_judged` aside, which is
    only asked of a document the schema found sound."""
    out: list[Finding] = []
    for check in CHECKS:
        out += check(doc)
    return out
