"""Resource vectors: CPU in millicores, memory in bytes, every other resource in its own unit.

Upstream: pkg/scheduler/api/resource_info.go (the kit's own, smaller version). Shared: the scheduler
counts with it, the queue webhook compares a Queue's capability, deserved and guarantee with it.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from reference_scheduler.kube import quantity

EPSILON = 1e-6
# Pods are counted per node separately (a node's `pods` allocatable), not as a resource of a task.
IGNORED = frozenset({"pods"})
# A PodGroup's minResources also names the quota forms of its resources (`count/pods`,
# `requests.cpu`, `limits.memory`, `requests.nvidia.com/gpu`, controllers/quota.py): they are no
# resource a node has. Upstream: pkg/scheduler/api/resource_info.go (NewResource skips count
# quotas and reads only native and scalar resource names).
QUOTA_FORMS = ("count/", "requests.", "limits.")


class Resource:
    __slots__ = ("values",)

    def __init__(self, values: Mapping[str, float] | None = None) -> None:
        self.values: dict[str, float] = {k: v for k, v in (values or {}).items() if k not in IGNORED}

    @classmethod
    def from_list(cls, items: Mapping[str, object] | None) -> Resource:
        return cls({name: quantity.milli(name, value) for name, value in (items or {}).items() if not name.startswith(QUOTA_FORMS)})

    @classmethod
    def of_pod(cls, pod: Mapping[str, Any]) -> Resource:
        """Requests of a pod: the sum of its containers, or its largest init container if more."""
        spec = pod.get("spec") or {}
        total = cls()
        for container in spec.get("containers") or []:
            total.add(cls.from_list(((container.get("resources") or {}).get("requests") or {})))
        for container in spec.get("initContainers") or []:
            total.set_max(cls.from_list(((container.get("resources") or {}).get("requests") or {})))
        return total

    def clone(self) -> Resource:
        return Resource(self.values)

    def add(self, other: Resource) -> Resource:
        for k, v in other.values.items():
            self.values[k] = self.values.get(k, 0.0) + v
        return self

    def sub(self, other: Resource) -> Resource:
        for k, v in other.values.items():
            self.values[k] = self.values.get(k, 0.0) - v
        return self

    def multiply(self, factor: float) -> Resource:
        for k in self.values:
            self.values[k] *= factor
        return self

    def set_max(self, other: Resource) -> Resource:
        for k, v in other.values.items():
            self.values[k] = max(self.values.get(k, 0.0), v)
        return self

    def is_empty(self) -> bool:
        return all(v < EPSILON for v in self.values.values())

    def get(self, name: str) -> float:
        return self.values.get(name, 0.0)

    def less_equal(self, other: Resource) -> bool:
        """Every dimension this resource asks for fits in `other` (absent there means zero)."""
        return all(v <= other.get(k) + EPSILON for k, v in self.values.items() if v > EPSILON)

    def insufficient(self, other: Resource) -> list[str]:
        """The resource names this request does not fit in `other`."""
        return sorted(k for k, v in self.values.items() if v > other.get(k) + EPSILON)

    def names(self) -> Iterable[str]:
        return self.values.keys()

    def __repr__(self) -> str:
        shown = ", ".join(f"{k} {v:g}" for k, v in sorted(self.values.items()))
        return f"<{shown}>"
