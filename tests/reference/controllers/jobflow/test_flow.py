"""One JobFlow sync in memory (a fake API): which Jobs it creates from JobTemplates, in dependsOn
order, the status and phase it writes, and the Jobs a succeeded flow with jobRetainPolicy delete
removes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from reference_scheduler.controllers.jobflow import flow
from tests.reference.builders import flow_job


@dataclasses.dataclass
class FakeCluster:
    templates: tuple[str, ...] = ("a", "b", "c", "d")
    created: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    deleted: list[str] = dataclasses.field(default_factory=list)
    events: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)

    def template(self, namespace: str, name: str) -> dict[str, Any] | None:
        return {"metadata": {"name": name, "namespace": namespace}, "spec": {"tasks": [{"name": "t", "replicas": 1}]}} if name in self.templates else None

    def create_job(self, namespace: str, job: dict[str, Any]) -> bool:
        self.created.append(job)
        return True

    def delete_job(self, namespace: str, name: str) -> None:
        self.deleted.append(name)

    def record(self, jobflow: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


DIAMOND = [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}, {"name": "c", "dependsOn": {"targets": ["a"]}}, {"name": "d", "dependsOn": {"targets": ["b", "c"]}}]


def jobflow(phase: str = "", policy: str = "", flows: list[dict[str, Any]] = DIAMOND) -> dict[str, Any]:
    spec: dict[str, Any] = {"flows": flows}
    if policy:
        spec["jobRetainPolicy"] = policy
    return {"metadata": {"name": "f", "namespace": "ns", "uid": "f-uid"}, "spec": spec, "status": {"state": {"phase": phase}} if phase else {}}


def run(jf: dict[str, Any], *jobs: dict[str, Any], cluster: FakeCluster | None = None) -> tuple[flow.Outcome, FakeCluster]:
    cluster = cluster or FakeCluster()
    return flow.JobFlowSync(cluster, jf, list(jobs)).run(), cluster


def created(cluster: FakeCluster) -> list[str]:
    return [j["metadata"]["name"] for j in cluster.created]


@pytest.mark.parametrize(
    ("jobs", "want_created", "want_phase"),
    [
        ((), ["f-a"], "Pending"),
        ((flow_job("a", "Pending"),), [], "Pending"),
        ((flow_job("a", "Running"),), [], "Running"),
        # b and c start once a completed; d waits for both.
        ((flow_job("a", "Completed"),), ["f-b", "f-c"], "Running"),
        ((flow_job("a", "Completed"), flow_job("b", "Completed"), flow_job("c", "Running")), [], "Running"),
        ((flow_job("a", "Completed"), flow_job("b", "Completed"), flow_job("c", "Completed")), ["f-d"], "Running"),
        ((flow_job("a", "Failed"),), [], "Failed"),
        ((flow_job("a", "Terminated"),), [], "Failed"),
    ],
)
def test_pending_flow(jobs: tuple[dict[str, Any], ...], want_created: list[str], want_phase: str) -> None:
    outcome, cluster = run(jobflow(), *jobs)
    assert created(cluster) == want_created
    assert outcome.status is not None and outcome.status["state"] == {"phase": want_phase}


def test_a_created_job_is_the_template_marked_and_owned() -> None:
    _, cluster = run(jobflow())
    made = cluster.created[0]
    assert made["metadata"]["labels"] == made["metadata"]["annotations"] == {flow.CREATED_BY_TEMPLATE: "ns.a", flow.CREATED_BY_FLOW: "ns.f"}
    assert made["metadata"]["ownerReferences"] == [{"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "f", "uid": "f-uid", "controller": True, "blockOwnerDeletion": True}]
    assert made["spec"] == {"tasks": [{"name": "t", "replicas": 1}]}
    assert cluster.events == [("Normal", "Created", "create a job named f-a!")]


@pytest.mark.parametrize(
    ("jobs", "want_phase"),
    [
        ((flow_job("a", "Completed"), flow_job("b", "Completed"), flow_job("c", "Completed"), flow_job("d", "Completed")), "Succeed"),
        ((flow_job("a", "Completed"), flow_job("b", "Failed"), flow_job("c", "Running")), "Failed"),
        # From Running a terminated Job does not fail the flow (upstream's running state only counts failed).
        ((flow_job("a", "Completed"), flow_job("b", "Terminated"), flow_job("c", "Running")), "Running"),
    ],
)
def test_running_flow(jobs: tuple[dict[str, Any], ...], want_phase: str) -> None:
    outcome, _ = run(jobflow("Running"), *jobs)
    assert outcome.status is not None and outcome.status["state"] == {"phase": want_phase}


def test_the_status_lists_jobs_by_phase_and_keeps_their_histories() -> None:
    outcome, _ = run(jobflow("Running"), flow_job("a", "Completed"), flow_job("b", "Running"), flow_job("c", "Aborted"))
    status = outcome.status
    assert status is not None
    assert status["completedJobs"] == ["f-a"] and status["runningJobs"] == ["f-b"] and status["unKnowJobs"] == ["f-c"]
    assert [e["name"] for e in status["jobStatusList"]] == ["f-a", "f-b", "f-c"]
    assert status["conditions"]["f-b"]["phase"] == "Running"
    again, _ = run({**jobflow("Running"), "status": status}, flow_job("a", "Completed"), flow_job("b", "Completed"), flow_job("c", "Aborted"))
    assert again.status is not None
    history = next(e for e in again.status["jobStatusList"] if e["name"] == "f-b")["runningHistories"]
    assert [h["state"] for h in history] == ["Running", "Completed"] and "endTimestamp" in history[0]


def test_an_unchanged_status_is_not_written_again() -> None:
    outcome, _ = run(jobflow("Running"), flow_job("a", "Running"))
    assert outcome.status is not None
    again, _ = run({**jobflow("Running"), "status": outcome.status}, flow_job("a", "Running"))
    assert again.status is None


def test_a_succeeded_flow_with_retain_policy_delete_deletes_its_jobs() -> None:
    jobs = (flow_job("a", "Completed"), flow_job("b", "Completed"))
    outcome, cluster = run(jobflow("Succeed", "delete", DIAMOND[:2]), *jobs)
    assert cluster.deleted == ["f-a", "f-b"] and outcome.status is None
    _, kept = run(jobflow("Succeed", "retain", DIAMOND[:2]), *jobs)
    assert kept.deleted == []


@pytest.mark.parametrize("phase", ["Failed", "Terminating"])
def test_failed_and_terminating_flows_are_left_alone(phase: str) -> None:
    outcome, cluster = run(jobflow(phase))
    assert outcome.status is None and cluster.created == []


def test_a_missing_template_is_an_error_to_retry() -> None:
    with pytest.raises(flow.MissingTemplate):
        run(jobflow(), cluster=FakeCluster(templates=()))
