"""Why a Queue is refused: the rules of Volcano's queue admission.

Upstream: pkg/webhooks/admission/queues/validate/validate_queue.go.
- Resources (validateResourceQuantityOfQueue, as from v1.14.2, the release the reference models),
  resource by resource, guarantee <= deserved <= capability: no quantity is negative; every
  guaranteed resource has a deserved quantity at least as large; a deserved quantity is at most the
  capability of that resource, a resource the capability leaves out being unlimited. (Until v1.14.1
  whole resources were compared, a missing resource counting as zero, and the guarantee was also
  held to the capability.) The weight must be positive (the mutating webhook defaults it).
- Hierarchy (validateHierarchicalQueue), on create and on an update that changes spec.parent: a
  parent other than `root` must exist, and a queue with no child yet whose status.allocated
  counts pods (written by the scheduler) cannot become a parent: its pods would run in a queue
  that is no longer a leaf.
- Deletion (validateQueueDeleting): `default` and `root` cannot be deleted, nor a queue that
  still has children.
- Hierarchy annotations (validateHierarchicalAttributes), on every create and update: the
  `volcano.sh/hierarchy` path and its `volcano.sh/hierarchy-weights` have as many parts, each
  weight is a number above 0, and no other queue's path lies under this one's (a queue at
  root/sci conflicts with one at root/sci/dev): the drf plugin's hierarchy is a tree of leaves.
The reasons keep Volcano's wording, which users match on.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from reference_scheduler.kube import quantity

PATH = "requestBody.spec"


def _quantities(spec: Mapping[str, Any], *path: str) -> dict[str, str]:
    """A resource list as written (name -> quantity text), {} when absent."""
    found: Any = spec
    for key in path:
        found = (found or {}).get(key) if isinstance(found, Mapping) else None
    if not isinstance(found, Mapping):
        return {}
    # As Go's Quantity.String() prints them (1024Mi is 1Gi), which is how Volcano words them.
    return {str(name): quantity.canonical(*quantity.exact_milli(value)) for name, value in found.items()}


def _resource_reasons(spec: Mapping[str, Any]) -> list[str]:
    """Every broken resource rule, in Volcano's words (field path, value, reason)."""
    capability = _quantities(spec, "capability")
    deserved = _quantities(spec, "deserved")
    guarantee = _quantities(spec, "guarantee", "resource")
    reasons = []
    for field_path, listed in ((f"{PATH}.capability", capability), (f"{PATH}.deserved", deserved), (f"{PATH}.guarantee.resource", guarantee)):
        for name, text in listed.items():
            if quantity.parse(text) < 0:
                reasons.append(f'{field_path}.{name}: Invalid value: "{text}": must be greater than or equal to 0')
    for name, text in guarantee.items():
        owed = deserved.get(name)
        if owed is None:
            reasons.append(f'{PATH}.deserved.{name}: Invalid value: "<nil>": deserved[{name}] must be >= guarantee[{name}]={text}')
        elif quantity.parse(owed) < quantity.parse(text):
            reasons.append(f'{PATH}.deserved.{name}: Invalid value: "{owed}": deserved[{name}]={owed} must be >= guarantee[{name}]={text}')
    for name, owed in deserved.items():
        cap = capability.get(name)
        if cap is not None and quantity.parse(owed) > quantity.parse(cap):
            reasons.append(f'{PATH}.deserved.{name}: Invalid value: "{owed}": deserved[{name}]={owed} must be <= capability[{name}]={cap}')
    return reasons


def validate(queue: Mapping[str, Any]) -> str:
    """The reason a Queue is refused, or '' when it is admitted."""
    spec = queue.get("spec") or {}
    weight = spec.get("weight")
    if weight is not None and int(weight) <= 0:
        return f'{PATH}.weight: Invalid value: {int(weight)}: queue weight must be a positive integer'
    reasons = _resource_reasons(spec)
    # Several at once read as Kubernetes' aggregate error does: "[a, b]".
    return reasons[0] if len(reasons) == 1 else (f"[{', '.join(reasons)}]" if reasons else "")


HIERARCHY = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"
ANNOTATIONS_PATH = "requestBody.metadata.annotations"


def _go_float(text: str) -> float | None:
    """Go's strconv.ParseFloat for the forms a weight is written in; None where it fails."""
    try:
        return float(text) if text.strip() == text and text.lower() not in ("nan", "inf", "+inf", "-inf", "infinity") else None
    except ValueError:
        return None


def validate_annotations(queue: Mapping[str, Any], queues: "QueueList") -> str:
    """The reason a queue's hierarchy annotations are refused, or ''."""
    annotations = (queue.get("metadata") or {}).get("annotations") or {}
    hierarchy, weights = str(annotations.get(HIERARCHY) or ""), str(annotations.get(HIERARCHY_WEIGHTS) or "")
    if not hierarchy and not weights:
        return ""
    parts = weights.split("/")
    if len(hierarchy.split("/")) != len(parts):
        return f'{ANNOTATIONS_PATH}: Invalid value: "{hierarchy}": {HIERARCHY} must have the same length with {HIERARCHY_WEIGHTS}'
    for weight in parts:
        number = _go_float(weight)
        if number is None:
            return f'{ANNOTATIONS_PATH}: Invalid value: "{weights}": {weight} in the {weights} is invalid number: strconv.ParseFloat: parsing "{weight}": invalid syntax'
        if number <= 0:
            return f'{ANNOTATIONS_PATH}: Invalid value: "{weights}": {weight} in the {weights} must be larger than 0'
    name = queue["metadata"]["name"]
    for other in queues():
        path = str(((other.get("metadata") or {}).get("annotations") or {}).get(HIERARCHY) or "")
        # Whole parts only: root/scidev is not under root/sci.
        if path and other["metadata"]["name"] != name and path.startswith(hierarchy + "/"):
            return f'{ANNOTATIONS_PATH}: Invalid value: "{hierarchy}": {hierarchy} is not allowed to be in the sub path of {path} of queue {other["metadata"]["name"]}'
    return ""


QueueLookup = Callable[[str], Mapping[str, Any] | None]
QueueList = Callable[[], Sequence[Mapping[str, Any]]]
ROOT = "root"
UNDELETABLE = ("default", ROOT)


def children(name: str, queues: QueueList) -> list[str]:
    """The names of the queues whose spec.parent is `name`."""
    return [str(q["metadata"]["name"]) for q in queues() if ((q.get("spec") or {}).get("parent") or "") == name]


def _allocated_pods(queue: Mapping[str, Any]) -> int:
    value = ((queue.get("status") or {}).get("allocated") or {}).get("pods")
    try:
        return int(float(str(value))) if value is not None else 0
    except ValueError:
        return 0


def validate_hierarchy(queue: Mapping[str, Any], lookup: QueueLookup, queues: QueueList) -> str:
    """The reason a queue may not take its spec.parent, or ''."""
    parent_name = (queue.get("spec") or {}).get("parent") or ""
    if parent_name in ("", ROOT):
        return ""
    name = queue["metadata"]["name"]
    parent = lookup(parent_name)
    if parent is None:
        return f'failed to get parent queue of queue {name}: queue.scheduling.volcano.sh "{parent_name}" not found'
    pods = _allocated_pods(parent)
    if not children(parent_name, queues) and pods:
        return f"queue {parent_name} cannot be the parent queue of queue {name} because it has allocated Pods: {pods}"
    return ""


def validate_delete(name: str, lookup: QueueLookup, queues: QueueList) -> str:
    """The reason a queue may not be deleted, or ''."""
    if name in UNDELETABLE:
        return f"`{name}` queue can not be deleted"
    if lookup(name) is None:
        return f'queue.scheduling.volcano.sh "{name}" not found'
    kids = children(name, queues)
    if kids:
        return f"queue {name} can not be deleted because it has {len(kids)} child queues: {', '.join(kids)}"
    return ""
