"""A Job's volumes (reference_scheduler/controllers/job/volumes.py) in memory: the claims a job
that has not started gets (generated names written into the Job, claims created and owned by it,
named ones checked), what a missing claim holds back, and the pods' volumes and mounts. Then the
webhook's rule that lets the controller write the generated names.

Upstream: pkg/controllers/job/job_controller_actions.go (createJobIOIfNotExist, createPVC),
job_controller_util.go (createJobPod), pkg/webhooks/admission/jobs/validate/admit_job.go
(validateJobUpdate)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from reference_scheduler.controllers.job import sync, volumes
from reference_scheduler.controllers.job.features import FULL, Features
from reference_scheduler.webhooks import validate_job
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.fake_controller import FakeController
from tests.reference.controllers.job.harness import task

Obj = dict[str, Any]
CLAIM_SPEC = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
GENERATED = re.compile(r"^tj-pvc-[0-9a-z]{12}$")


def pending(job: Obj) -> Obj:
    out = copy.deepcopy(job)
    out["status"] = {"state": {"phase": "Pending"}, "version": 0, "retryCount": 0, "minAvailable": int(job["spec"]["minAvailable"])}
    return out


def with_volumes(*vols: Obj) -> Obj:
    return pending(harness.job(task("worker", replicas=2, initContainers=[{"name": "init", "image": "busybox"}]), volumes=list(vols)))


def run(job: Obj, claims: tuple[str, ...] = (), features: Features = FULL) -> tuple[FakeController, sync.JobSync]:
    ctl = FakeController(job, features, new_podgroup_phase="Inqueue")
    for name in claims:
        ctl.core.claims[name] = {"metadata": {"name": name}}
    one = sync.JobSync(ctl, copy.deepcopy(job), [], [], [])
    one.run()
    return ctl, one


def test_a_claim_spec_gets_a_generated_claim_owned_by_the_job_and_named_in_it() -> None:
    job = with_volumes({"mountPath": "/one", "volumeClaimName": "kept"}, {"mountPath": "/two", "volumeClaim": CLAIM_SPEC})
    ctl, _ = run(job, claims=("kept",))
    [created] = ctl.writes.of("create", "PersistentVolumeClaim")
    assert GENERATED.match(created), created
    # The claim first, then the Job's spec, then the PodGroup and the pods, as initiateJob orders them.
    assert [c[:2] for c in ctl.writes.calls[:3]] == [("create", "PersistentVolumeClaim"), ("patch", "jobs"), ("create", "podgroups")]
    stored = ctl.custom.objects[("jobs", "tj")]
    assert [v["volumeClaimName"] for v in stored["spec"]["volumes"]] == ["kept", created]
    claim = ctl.core.claims[created]
    assert claim["spec"] == CLAIM_SPEC
    assert claim["metadata"]["ownerReferences"][0] == {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "tj", "uid": harness.JOB_UID, "controller": True, "blockOwnerDeletion": True}
    assert stored["status"]["controlledResources"] == {"volume-pvc-kept": "kept", f"volume-pvc-{created}": created}


def test_every_container_mounts_each_claim_once_and_init_containers_none() -> None:
    job = with_volumes({"mountPath": "/one", "volumeClaimName": "kept"}, {"mountPath": "/again", "volumeClaimName": "kept"}, {"mountPath": "/two", "volumeClaim": CLAIM_SPEC})
    _, one = run(job, claims=("kept",))
    pod = one.pods["tj-worker-1"]["spec"]
    claims = {v["persistentVolumeClaim"]["claimName"]: v["name"] for v in pod["volumes"]}
    assert len(claims) == 2 and "kept" in claims
    assert all(re.match(r"^tj-[0-9a-z]{12}$", name) for name in claims.values())
    mounts = {m["mountPath"]: m["name"] for m in pod["containers"][0]["volumeMounts"]}
    # The second entry naming "kept" is a duplicate: neither mounted nor given a volume.
    assert set(mounts) == {"/one", "/two"} and mounts["/one"] == claims["kept"]
    assert "volumeMounts" not in pod["initContainers"][0]


def test_a_named_claim_that_does_not_exist_holds_the_job_back() -> None:
    job = with_volumes({"mountPath": "/one", "volumeClaimName": "missing"})
    ctl, one = run(job)
    assert ctl.writes.calls == []
    assert ctl.events == [volumes.PVC_ERROR] and ctl.wakes
    assert one.pods == {}


def test_claims_already_named_are_only_checked() -> None:
    job = with_volumes({"mountPath": "/one", "volumeClaimName": "tj-pvc-aaaaaaaaaaaa", "volumeClaim": CLAIM_SPEC})
    ctl, one = run(job, claims=("tj-pvc-aaaaaaaaaaaa",))
    assert ctl.writes.of("create", "PersistentVolumeClaim") == [] and ctl.writes.of("patch", "jobs") == []
    assert one.pods["tj-worker-0"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == "tj-pvc-aaaaaaaaaaaa"


def test_a_generated_name_never_reuses_an_existing_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    names = iter(["tj-pvc-taken", "tj-pvc-fresh"])
    monkeypatch.setattr(volumes, "generated_claim_name", lambda job_name: next(names))
    job = with_volumes({"mountPath": "/two", "volumeClaim": CLAIM_SPEC})
    ctl, _ = run(job, claims=("tj-pvc-taken",))
    assert ctl.writes.of("create", "PersistentVolumeClaim") == ["tj-pvc-fresh"]


def test_switched_off_the_controller_ignores_volumes() -> None:
    job = with_volumes({"mountPath": "/one", "volumeClaimName": "missing"})
    ctl, one = run(job, features=Features.without({"volumes"}))
    assert ctl.writes.of("create", "PersistentVolumeClaim") == [] and ctl.writes.of("create", "podgroups") == ["tj-" + harness.JOB_UID]
    assert "volumes" not in one.pods["tj-worker-0"]["spec"]


@pytest.mark.parametrize(
    ("new_volumes", "refused"),
    [
        # The controller writes the name it generated for a claim spec: allowed.
        ([{"mountPath": "/two", "volumeClaim": CLAIM_SPEC, "volumeClaimName": "tj-pvc-x"}], False),
        # Anything else about a volume is frozen.
        ([{"mountPath": "/elsewhere", "volumeClaim": CLAIM_SPEC}], True),
        ([{"mountPath": "/two", "volumeClaimName": "other"}], True),
    ],
)
def test_an_update_may_fill_in_a_generated_claim_name(new_volumes: list[Obj], refused: bool) -> None:
    old = harness.job(task("worker"), volumes=[{"mountPath": "/two", "volumeClaim": CLAIM_SPEC}])
    new = copy.deepcopy(old)
    new["spec"]["volumes"] = new_volumes
    assert bool(validate_job.validate_update(old, new)) is refused
