"""pdb: PodDisruptionBudgets limit which running pods the scheduler may evict. A pod is a victim
only while every budget that selects it (same namespace, non-empty selector, the pod not already
in the budget's disruptedPods) still allows one more disruption, counted down over the pods judged
together; a pod with no labels is never a victim. The same rule narrows preempt's and reclaim's
victims and names shuffle's.

Upstream: pkg/scheduler/plugins/pdb/pdb.go.
"""

from __future__ import annotations

from typing import Any, Mapping

from reference_scheduler.api.labels import selector_matches
from reference_scheduler.scheduler.api import job_info
from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.framework.session import Session

NAME = "pdb"


def _selects(budget: Mapping[str, Any], task: job_info.TaskInfo, labels: Mapping[str, str]) -> bool:
    meta = budget.get("metadata") or {}
    if meta.get("namespace") != task.namespace:
        return False
    selector = (budget.get("spec") or {}).get("selector")
    # An absent or empty selector selects nothing here (upstream skips an empty one).
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return False
    return selector_matches(selector, labels)


def disruptable(budgets: list[dict[str, Any]], tasks: list[job_info.TaskInfo]) -> list[job_info.TaskInfo]:
    """The tasks no budget forbids evicting, each budget's allowance shared over them in order.
    Upstream: pdbFilterFn."""
    allowed = [int((b.get("status") or {}).get("disruptionsAllowed") or 0) for b in budgets]
    victims = []
    for task in tasks:
        labels = (task.pod.get("metadata") or {}).get("labels") or {}
        if not labels:
            continue
        violated = False
        for i, budget in enumerate(budgets):
            if not _selects(budget, task, labels):
                continue
            # A pod the API server already counted as disrupted does not use the allowance again.
            if task.name in ((budget.get("status") or {}).get("disruptedPods") or {}):
                continue
            allowed[i] -= 1
            if allowed[i] < 0:
                violated = True
        if not violated:
            victims.append(task)
    return victims


class Pdb:
    NAME = NAME

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        budgets = ssn.disruption_budgets

        def victims(evictor: job_info.TaskInfo, candidates: list[job_info.TaskInfo]) -> tuple[list[job_info.TaskInfo], int]:
            return disruptable(budgets, candidates), interface.PERMIT

        ssn.add_victim_tasks_fn(NAME, lambda tasks: disruptable(budgets, tasks))
        ssn.add_preemptable_fn(NAME, victims)
        ssn.add_reclaimable_fn(NAME, victims)

    def on_session_close(self, ssn: Session) -> None:
        return None
