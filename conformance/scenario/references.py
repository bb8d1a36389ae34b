"""What a scenario's parts say about one another, checked at load time: the names `remember` steps
give and the comparisons that use them, the steps `never_since` and `since` name, the windows of
`between`, the nodes `node` steps name, and the filters an `every` takes. Like the checks in
`semantics`, each reads the document defensively and leaves a part of the wrong shape to the schema.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from conformance.cluster import nodes
from conformance.scenario import durations, models, profiles, semantics

Finding = semantics.Finding
Path = semantics.Path
COMPARES_REMEMBERED = ("same_as", "differs_from")


def _step_position(at: Path) -> int | None:
    """The index of the step a path lies in; None for the scenario's `expect` (after every step)."""
    return at[1] if len(at) > 1 and at[0] == "steps" and isinstance(at[1], int) else None


# --- remembered values --------------------------------------------------------------------------------
def _compared_names(at: Path, kind: str, spec: Mapping[str, Any]) -> Iterator[tuple[Path, str]]:
    fields = spec.get("fields") if kind in ("object", "every") else None
    for field, want in (fields.items() if isinstance(fields, Mapping) else ()):
        for key in COMPARES_REMEMBERED:
            if isinstance(want, Mapping) and isinstance(want.get(key), str):
                yield (*at, "fields", field, key), want[key]
    for key, value in spec.items():
        if key != "fields":
            yield from _selected_names(value, (*at, key))


def _selected_names(node: Any, at: Path) -> Iterator[tuple[Path, str]]:
    """Every `{remembered: NAME}` of a selection (a pod selector, an object reference or
    selection), at any depth."""
    if isinstance(node, Mapping):
        if isinstance(node.get("remembered"), str):
            yield (*at, "remembered"), node["remembered"]
            return
        for key, value in node.items():
            yield from _selected_names(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _selected_names(value, (*at, i))


def remembered_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Each name a comparison uses was given by a `remember` step before it, and each name is
    given once."""
    out: list[Finding] = []
    given: dict[str, int] = {}
    for i, step in semantics._items(doc, "steps"):
        spec = step.get("remember")
        name = spec.get("as") if isinstance(spec, Mapping) else None
        if isinstance(name, str):
            if name in given:
                out.append(Finding(("steps", i, "remember", "as"), f"the name {name!r} is remembered by step {given[name] + 1} already; give each value its own name"))
            else:
                given[name] = i
    for at, kind, spec in semantics.predicates(doc):
        position = _step_position(at)
        for path, name in _compared_names(at, kind, spec):
            earlier = sorted(n for n, i in given.items() if position is None or i < position)
            if name not in earlier:
                later = f" (step {given[name] + 1} remembers it, but only after this check)" if name in given else ""
                out.append(Finding(path, f"expected a name an earlier `remember` step gives ({', '.join(map(repr, earlier)) or 'none'}), got {name!r}{later}{semantics.closest(name, earlier)}"))
    return out


# --- anchored windows ------------------------------------------------------------------------------------
def anchor_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """`never_since` and `since` name a step that exists and, from an `expect` step, one before
    it; `between` is [FROM, TO] with FROM before TO."""
    found = doc.get("steps")
    steps: list[Any] = found if isinstance(found, list) else []
    describes = [str(s.get("describe", "")) if isinstance(s, Mapping) else "" for s in steps]
    out: list[Finding] = []
    for at, exp in semantics.expectations(doc):
        position = _step_position(at)
        for key in ("never_since", "since"):
            ref = exp.get(key)
            if ref is None or isinstance(ref, bool) or not isinstance(ref, (int, str)):
                continue  # the schema's
            try:
                index = models.step_index(ref, describes)
            except ValueError as err:
                described = [d for d in describes if d]
                hint = semantics.closest(ref, described) if isinstance(ref, str) else ""
                out.append(Finding((*at, key), f"expected a step's number (1 to {len(describes)}) or its describe text, got {semantics.got(ref)}: {err}{hint}"))
                continue
            if position is not None and index >= position:
                out.append(Finding((*at, key), f"names step {index + 1}, which does not come before this expect step (step {position + 1}); an expectation can only be anchored at a step that has ended"))
        window = exp.get("between")
        if isinstance(window, list) and len(window) == 2:
            try:
                earliest, latest = (durations.parse(d) for d in window)
            except (ValueError, TypeError):
                continue  # the schema's
            if earliest >= latest:
                out.append(Finding((*at, "between"), f"expected [FROM, TO] with FROM before TO, got {semantics.got(window)}"))
    return out


# --- nodes ---------------------------------------------------------------------------------------------
def _scenario_nodes(doc: Mapping[str, Any]) -> set[str] | None:
    """The names of the nodes a scenario starts with; None when they cannot be known (a part of
    the cluster is malformed: its own problem is reported)."""
    found = doc.get("cluster")
    cluster: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    try:
        groups = [models.node_group(g) for g in cluster.get("nodes") or []]
        if "nodes" not in cluster and "profile" not in cluster:
            groups = list(nodes.parse(None))
        names = set(nodes.node_names(groups))
        if "profile" in cluster:
            names |= {n.name for n in profiles.resolve(cluster["profile"]).nodes}
    except Exception:  # the schema, the node spec and the profile checks report it
        return None
    return names


def node_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """A `node` step names a node the scenario has at that point (its own, or one an earlier step
    added); `add` names one it does not have yet."""
    present = _scenario_nodes(doc)
    if present is None:
        return []
    out: list[Finding] = []
    for i, step in semantics._items(doc, "steps"):
        spec = step.get("node")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
            continue
        name, action = spec["name"], spec.get("action")
        if action in ("taint", "untaint") and "taint" not in spec:
            out.append(Finding(("steps", i, "node"), f"{action} needs `taint: {{key, effect}}` beside it: the taint to {'add' if action == 'taint' else 'remove'}"))
        if action == "add":
            if name in present:
                out.append(Finding(("steps", i, "node", "name"), f"expected the name of a node the scenario does not have yet, got {name!r}, which it has"))
            present.add(name)
            continue
        if name not in present:
            known = sorted(present)
            out.append(Finding(("steps", i, "node", "name"), f"expected a node the scenario has here ({', '.join(known) or 'none'}), got {name!r}{semantics.closest(name, known)}"))
        elif action == "delete":
            present.discard(name)
    return out


# --- every -------------------------------------------------------------------------------------------------
def every_findings(doc: Mapping[str, Any]) -> list[Finding]:
    """`phase` and `bound` filter pods: they go with `select`, not with `objects`."""
    out: list[Finding] = []
    for at, kind, spec in semantics.predicates(doc):
        if kind == "every" and "objects" in spec:
            out += [Finding((*at, key), f"{key} filters pods (with `select`); for {semantics.got(spec['objects'].get('kind') if isinstance(spec['objects'], Mapping) else None)} objects check a field instead (status.phase, spec.nodeName)") for key in ("phase", "bound") if key in spec]
    return out


CHECKS = (remembered_findings, anchor_findings, node_findings, every_findings)


def findings(doc: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    for check in CHECKS:
        out += check(doc)
    return out
