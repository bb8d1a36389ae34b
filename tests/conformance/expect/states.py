"""In-memory states for the judge's tests: pods, views of several kinds, and a recorder the test
feeds instead of watches (with a clock it controls)."""

from __future__ import annotations

from typing import Any

from conformance.cluster import resources
from conformance.expect import select
from conformance.observe import recorder
from conformance.scenario import models

POD = resources.lookup("Pod")
PODGROUP = resources.lookup("PodGroup")
NODE = resources.lookup("Node")
EVENT = resources.lookup("Event")


def pod(name: str, job: str, task: str = "worker", phase: str = "Pending", node: str | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {select.JOB_NAME_LABEL: job, select.TASK_LABEL: task}},
        "spec": {"nodeName": node, "containers": [{"name": "main", "env": [{"name": "VC_TASK_INDEX", "value": name[-1]}]}]},
        "status": {"phase": phase},
    }


def view(*objs: tuple[resources.Kind, dict[str, Any]], memory: dict[str, recorder.Remembered] | None = None) -> recorder.View:
    table: dict[resources.Kind, dict[tuple[str, str], dict[str, Any]]] = {}
    for kind, obj in objs:
        table.setdefault(kind, {})[(obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = obj
    return recorder.View(table, 0.0, memory)


def pred(kind: str, **spec: Any) -> models.Predicate:
    return models.Predicate(kind, spec)


class FakeRecorder(recorder.Recorder):
    """A recorder fed by the test instead of watches, with a controllable clock."""

    def __init__(self) -> None:
        self.clock_value = 0.0
        super().__init__(client=None, namespace="ns", kinds=[POD], clock=lambda: self.clock_value)  # type: ignore[arg-type]

    def feed(self, obj: dict[str, Any], at: float, event: str = "ADDED") -> None:
        with self.cond:
            self.clock_value = at
        obj = dict(obj, metadata={**obj["metadata"], "resourceVersion": str(at)})
        self._apply(POD, event, obj)

    def advance(self, to: float) -> None:
        """Let time pass with nothing observed (wakes whoever waits)."""
        with self.cond:
            self.clock_value = to
            self.cond.notify_all()
