"""A JobTemplate's list of the Jobs made from it (controllers/jobflow/template.py), in memory:
written only when a Job made from it is added."""

from __future__ import annotations

from reference_scheduler.controllers.jobflow import template
from tests.reference.builders import flow_job


def test_the_template_lists_the_jobs_made_from_it() -> None:
    jt = {"metadata": {"name": "a", "namespace": "ns"}, "status": {}}
    assert template.depends_on_list(jt, [flow_job("a", "Running"), flow_job("b", "Running")]) == ["f-a"]
    assert template.depends_on_list({**jt, "status": {"jobDependsOnList": ["f-a"]}}, [flow_job("a", "Running")]) is None
    assert template.depends_on_list(jt, []) is None
    # A Job deleted since is not a reason to write (upstream syncs on additions only).
    assert template.depends_on_list({**jt, "status": {"jobDependsOnList": ["f-a", "f-gone"]}}, [flow_job("a", "Running")]) is None
