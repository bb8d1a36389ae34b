"""Finding what an expectation talks about: pods by selector, objects by reference, fields by path."""

from __future__ import annotations

import re
from typing import Any, Mapping

from conformance.cluster import resources
from conformance.observe import recorder

JOB_NAME_LABEL = "volcano.sh/job-name"
TASK_LABEL = "volcano.sh/task-spec"
POD = resources.lookup("Pod")
PODGROUP = resources.lookup("PodGroup")
_MISSING = object()


def pods(view: recorder.View, select: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """Pods matching every filter of `select` (job, task, names, labels, node)."""
    select = select or {}
    out = []
    for pod in view.of(POD).values():
        meta = pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        if "job" in select and labels.get(JOB_NAME_LABEL) != select["job"]:
            continue
        if "task" in select and labels.get(TASK_LABEL) != select["task"]:
            continue
        if "names" in select and meta.get("name") not in select["names"]:
            continue
        if any(labels.get(k) != v for k, v in (select.get("labels") or {}).items()):
            continue
        if "node" in select and (pod.get("spec") or {}).get("nodeName") != select["node"]:
            continue
        out.append(pod)
    return sorted(out, key=lambda p: p["metadata"]["name"])


def describe_ref(ref: Mapping[str, Any]) -> str:
    if "job" in ref:
        return f"the {ref['kind']} of job {ref['job']}"
    return f"{ref['kind']} {ref['name']}"


def resolve(view: recorder.View, ref: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object `ref` names; a PodGroup can be named by its Job (`job:`), as its name has the Job's uid."""
    kind = resources.lookup(ref["kind"], ref.get("apiVersion"))
    if "name" in ref:
        return view.named(kind, ref["name"])
    owner = ref["job"]
    for obj in view.of(kind).values():
        meta = obj.get("metadata") or {}
        owners = meta.get("ownerReferences") or []
        if any(o.get("kind") == "Job" and o.get("name") == owner for o in owners):
            return obj
        if (meta.get("annotations") or {}).get(JOB_NAME_LABEL) == owner or (meta.get("labels") or {}).get(JOB_NAME_LABEL) == owner:
            return obj
    return None


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
