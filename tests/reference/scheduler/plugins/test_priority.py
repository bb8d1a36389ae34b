"""priority's task order on in-memory snapshots: within a job the higher-priority task is placed
first, and the volcano.sh/task-priority annotation outranks the pod's own priority.

Upstream: pkg/scheduler/plugins/priority/priority.go."""

from __future__ import annotations

import pytest

from reference_scheduler.scheduler.api import job_info
from tests.reference.builders import node, pod, podgroup, with_meta
from tests.reference.scheduler_harness import GANG_CONF, Case, run_case

CASES = [
    Case(
        "the higher-priority task of a job is placed first (priority's task order)",
        nodes=[node("n0", "2")],
        pods=[pod("j-first-0", "j", priority=10), pod("j-first-1", "j", priority=10), pod("j-second-0", "j", priority=100), pod("j-second-1", "j", priority=100)],
        podgroups=[podgroup("j", 2)],
        conf=GANG_CONF,
        binds={"j-second-0": "n0", "j-second-1": "n0"},
    ),
    Case(
        "the volcano.sh/task-priority annotation outranks the pod's priority",
        nodes=[node("n0", "1")],
        pods=[pod("j-a-0", "j", priority=100), with_meta(pod("j-b-0", "j", priority=10), annotations={job_info.TASK_PRIORITY_KEY: "1000"})],
        podgroups=[podgroup("j", 1)],
        conf=GANG_CONF,
        binds={"j-b-0": "n0"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cycle(case: Case) -> None:
    run_case(case)
