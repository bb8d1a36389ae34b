"""The phases each kind can be in, as the kit reads them (`conformance.observe.summaries.phase_of`):
a Volcano Job's and a JobFlow's `status.state.phase`, a Queue's `status.state`, any other kind's
`status.phase`.

A `phase` predicate or a `sequence` naming a phase its kind never has can never hold; the loader
refuses it instead of letting the run blame the implementation. Kinds missing here have no phase.
"""

from __future__ import annotations

# (apiVersion, kind) -> every phase, in the API's own order.
PHASES: dict[tuple[str, str], tuple[str, ...]] = {
    # Upstream: volcano-sh/apis pkg/apis/batch/v1alpha1/job.go (JobPhase).
    ("batch.volcano.sh/v1alpha1", "Job"): ("Pending", "Aborting", "Aborted", "Running", "Restarting", "Completing", "Completed", "Terminating", "Terminated", "Failed"),
    # Upstream: volcano-sh/apis pkg/apis/scheduling/v1beta1/types.go (PodGroupPhase, QueueState).
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): ("Pending", "Running", "Unknown", "Inqueue", "Completed"),
    ("scheduling.volcano.sh/v1beta1", "Queue"): ("Open", "Closed", "Closing", "Unknown"),
    # Upstream: volcano-sh/apis pkg/apis/flow/v1alpha1/jobflow_types.go (Phase, status.state.phase).
    ("flow.volcano.sh/v1alpha1", "JobFlow"): ("Succeed", "Terminating", "Failed", "Running", "Pending"),
    # Kubernetes core/v1 PodPhase and NamespacePhase.
    ("v1", "Pod"): ("Pending", "Running", "Succeeded", "Failed", "Unknown"),
    ("v1", "Namespace"): ("Active", "Terminating"),
}


def of(api_version: str, kind: str) -> tuple[str, ...]:
    """The phases of `kind` (empty: the kind has no phase the kit reads)."""
    return PHASES.get((api_version, kind), ())


def with_phases() -> list[str]:
    """The kinds that have a phase, as a scenario names them."""
    return sorted({kind for _, kind in PHASES})
