"""Finding what an expectation talks about: pods by selector, objects by reference or selection,
fields by path.

A reference names one object: by `name`, by the Volcano Job it belongs to (`job`), or by a
selection (`name_matches`, a regex searched in the name, or `labels`), for objects whose names are
generated. A selection that matches several objects names none of them: `resolve` says which
matched (Ambiguous), and the `every` predicate is the way to judge them all.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from conformance.cluster import resources
from conformance.expect import hypernodes
from conformance.observe import recorder

JOB_NAME_LABEL = "volcano.sh/job-name"
TASK_LABEL = "volcano.sh/task-spec"
POD = resources.lookup("Pod")
PODGROUP = resources.lookup("PodGroup")
NODE = resources.lookup("Node")
HYPERNODE = resources.lookup("HyperNode")
# The keys of an object reference that select rather than name.
SELECTION_KEYS = ("name_matches", "labels")
_MISSING = object()


class Ambiguous(LookupError):
    """A reference by selection matched more than one object."""

    def __init__(self, ref: Mapping[str, Any], names: list[str]) -> None:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        super().__init__(f"{describe_ref(ref)} names one object, but {len(names)} match ({shown}); select one, or judge them all with `every`")
        self.names = names


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _labels_match(obj: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    have = _labels(obj)
    return all(have.get(k) == v for k, v in (wanted or {}).items())


# A selection's value taken from a `remember` step: `job: {remembered: first}`.
REMEMBERED = "remembered"
# What a value remembered under no name (or as several values) matches: nothing.
_NOTHING = object()


def remembered_value(view: recorder.View, value: Any) -> Any:
    """`value` itself, or for `{remembered: NAME}` the one value noted under NAME (a value noted per
    object, or none at all, matches nothing)."""
    if isinstance(value, Mapping) and REMEMBERED in value:
        noted = view.memory.get(str(value[REMEMBERED]))
        if noted is None or noted.per_name is not None:
            return _NOTHING
        return noted.single
    return value


def _with_remembered(view: recorder.View, selection: Mapping[str, Any]) -> dict[str, Any]:
    """The selection with every remembered value filled in: name, job, task, node, names' items
    and labels' values."""
    out = {key: remembered_value(view, value) for key, value in selection.items()}
    if isinstance(out.get("names"), list):
        out["names"] = [remembered_value(view, n) for n in out["names"]]
    if isinstance(out.get("labels"), Mapping):
        out["labels"] = {k: remembered_value(view, v) for k, v in out["labels"].items()}
    return out


def pods(view: recorder.View, select: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """Pods matching every filter of `select`: job, task, names, name_matches, labels, node, and
    the node's labels (`node_labels`) or the HyperNode the node belongs to (`hypernode`, at any
    depth of the tree). A value may be `{remembered: NAME}`, what a `remember` step noted."""
    select = _with_remembered(view, select or {})
    node_names: set[str] | None = None
    if "node_labels" in select:
        node_names = {_name(n) for n in view.of(NODE).values() if _labels_match(n, select["node_labels"])}
    if "hypernode" in select:
        under = hypernodes.nodes_under(view.of(HYPERNODE).values(), view.of(NODE).values(), select["hypernode"])
        node_names = under if node_names is None else node_names & under
    out = []
    for pod in view.of(POD).values():
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        node = (pod.get("spec") or {}).get("nodeName")
        if "job" in select and labels.get(JOB_NAME_LABEL) != select["job"]:
            continue
        if "task" in select and labels.get(TASK_LABEL) != select["task"]:
            continue
        if "names" in select and meta.get("name") not in select["names"]:
            continue
        if "name_matches" in select and re.search(select["name_matches"], meta.get("name") or "") is None:
            continue
        if not _labels_match(pod, select.get("labels")):
            continue
        if "node" in select and node != select["node"]:
            continue
        if node_names is not None and node not in node_names:
            continue
        out.append(pod)
    return sorted(out, key=_name)


def objects(view: recorder.View, selection: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every object of the selection's kind that it matches (`name`, `job`, `name_matches`,
    `labels`; all given must match, each may be `{remembered: NAME}`), by name."""
    kind = resources.lookup(selection["kind"], selection.get("apiVersion"))
    selection = _with_remembered(view, selection)
    out = []
    for obj in view.of(kind).values():
        if "name" in selection and _name(obj) != selection["name"]:
            continue
        if "job" in selection and not _belongs_to_job(obj, selection["job"]):
            continue
        if "name_matches" in selection and re.search(selection["name_matches"], _name(obj)) is None:
            continue
        if not _labels_match(obj, selection.get("labels")):
            continue
        out.append(obj)
    return sorted(out, key=_name)


def _belongs_to_job(obj: Mapping[str, Any], job: str) -> bool:
    meta = obj.get("metadata") or {}
    if any(o.get("kind") == "Job" and o.get("name") == job for o in meta.get("ownerReferences") or []):
        return True
    return bool((meta.get("annotations") or {}).get(JOB_NAME_LABEL) == job or (meta.get("labels") or {}).get(JOB_NAME_LABEL) == job)


def describe_ref(ref: Mapping[str, Any]) -> str:
    if "job" in ref and not any(k in ref for k in SELECTION_KEYS):
        return f"the {ref['kind']} of job {ref['job']}"
    if "name" in ref:
        return f"{ref['kind']} {ref['name']}"
    return f"the {describe_selection(ref)}"


def describe_selection(selection: Mapping[str, Any]) -> str:
    """`Command with a name matching '^x-'`, `Service of job j with labels a=b`, `PodGroup`."""
    parts = []
    if "name_matches" in selection:
        parts.append(f"a name matching {selection['name_matches']!r}")
    if "labels" in selection:
        parts.append("labels " + ", ".join(f"{k}={v}" for k, v in selection["labels"].items()))
    text = selection["kind"] + (f" of job {selection['job']}" if "job" in selection else "")
    return f"{text} with {' and '.join(parts)}" if parts else text


def resolve(view: recorder.View, ref: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object `ref` names, or None. A PodGroup can be named by its Job (`job:`), as its name
    has the Job's uid; an object with a generated name by a selection (Ambiguous when several
    match)."""
    kind = resources.lookup(ref["kind"], ref.get("apiVersion"))
    ref = _with_remembered(view, ref)
    if "name" in ref:
        return view.named(kind, ref["name"]) if isinstance(ref["name"], str) else None
    if "job" in ref:
        for obj in view.of(kind).values():
            if _belongs_to_job(obj, ref["job"]):
                return obj
        return None
    found = objects(view, ref)
    if len(found) > 1:
        raise Ambiguous(ref, [_name(o) for o in found])
    return found[0] if found else None


# key | ["key.with.dots"] | [index] | [field=value]
_SEGMENT = re.compile(r'\["([^"]+)"\]|([^.\[\]]+)|\[(\d+)\]|\[([^=\]]+)=([^\]]*)\]')


def field(obj: Any, path: str) -> Any:
    """The value at `path` (`spec.containers[0].env[name=VC_TASK_INDEX].value`,
    `data["worker.host"]`), or MISSING."""
    current = obj
    for match in _SEGMENT.finditer(path):
        quoted, key, index, sel_key, sel_value = match.groups()
        key = quoted if quoted is not None else key
        if key is not None:
            if not isinstance(current, Mapping) or key not in current:
                return _MISSING
            current = current[key]
        elif index is not None:
            if not isinstance(current, list) or int(index) >= len(current):
                return _MISSING
            current = current[int(index)]
        else:
            if not isinstance(current, list):
                return _MISSING
            found = [item for item in current if isinstance(item, Mapping) and str(item.get(sel_key)) == sel_value]
            if not found:
                return _MISSING
            current = found[0]
    return current


def missing(value: Any) -> bool:
    return value is _MISSING
