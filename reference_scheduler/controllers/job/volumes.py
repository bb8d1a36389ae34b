"""A Job's volumes: each `spec.volumes` entry is a PersistentVolumeClaim that every container of
the job's pods mounts at the entry's `mountPath`.

An entry names an existing claim (`volumeClaimName`), or gives a claim's spec (`volumeClaim`) for
the controller to create under a generated name `<job>-pvc-<12 random characters>`, which it then
writes into the Job (`volumeClaimName`), so later syncs and a restarted controller find the same
claim. The claim is owned by the Job and goes with it. A named claim that does not exist keeps the
job from starting: no PodGroup, no pod, until the claim is there. Each claim is listed in the
Job's `status.controlledResources` as `volume-pvc-<name>`.

Upstream: pkg/controllers/job/job_controller_actions.go (initiateJob, createJobIOIfNotExist,
createPVC), job_controller_util.go (createJobPod: the pod's volumes), helpers/helpers.go
(GenPVCName, GenRandomStr).
"""

from __future__ import annotations

import dataclasses
import random
import string
from typing import Any, Callable

import kubernetes

from reference_scheduler.kube import client

CLAIM_NAME_CHARS = string.digits + string.ascii_lowercase
CLAIM_SUFFIX_LENGTH = 12
CONTROLLED_PREFIX = "volume-pvc-"
# The Event reason and message start vc-controller-manager uses when a job's claims are not ready.
PVC_ERROR = "PVCError"


def random_suffix(length: int = CLAIM_SUFFIX_LENGTH) -> str:
    return "".join(random.choice(CLAIM_NAME_CHARS) for _ in range(length))


def generated_claim_name(job_name: str) -> str:
    return f"{job_name}-pvc-{random_suffix()}"


@dataclasses.dataclass
class Claims:
    """What ensuring a job's claims came to: the volumes with every claim named, whether names
    were generated (the Job must be updated), and the error that keeps the job from starting."""

    volumes: list[dict[str, Any]]
    named_now: bool = False
    error: str = ""


def ensure_claims(core: kubernetes.client.CoreV1Api, job: dict[str, Any], exists: Callable[[str, str], bool] | None = None) -> Claims:
    """Name and create the claims the job's volumes ask for; check the named ones exist."""
    meta = job["metadata"]
    namespace = meta["namespace"]
    exists = exists or (lambda ns, name: claim_exists(core, ns, name))
    claims = Claims([dict(v) for v in job["spec"].get("volumes") or []])
    for volume in claims.volumes:
        name = volume.get("volumeClaimName") or ""
        if name:
            if not exists(namespace, name):
                claims.error = f"pvc {name} is not found, the job will be in the Pending state until the PVC is created"
                return claims
            continue
        name = generated_claim_name(meta["name"])
        while exists(namespace, name):
            name = generated_claim_name(meta["name"])
        volume["volumeClaimName"] = name
        claims.named_now = True
        if volume.get("volumeClaim"):
            core.create_namespaced_persistent_volume_claim(namespace, client.as_body(claim_body(job, name, volume["volumeClaim"])))
    return claims


def claim_exists(core: kubernetes.client.CoreV1Api, namespace: str, name: str) -> bool:
    try:
        core.read_namespaced_persistent_volume_claim(name, namespace)
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return False
        raise
    return True


def claim_body(job: dict[str, Any], name: str, claim_spec: dict[str, Any]) -> dict[str, Any]:
    meta = job["metadata"]
    owner = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": meta["namespace"], "ownerReferences": [owner]}, "spec": claim_spec}


def controlled(volumes: list[dict[str, Any]]) -> dict[str, str]:
    """The `status.controlledResources` entries of the job's claims."""
    return {CONTROLLED_PREFIX + v["volumeClaimName"]: v["volumeClaimName"] for v in volumes if v.get("volumeClaimName")}


def mount(pod: dict[str, Any], job: dict[str, Any]) -> None:
    """One pod volume per claim (a claim named twice is mounted once), named `<job>-<random>`,
    and a mount of it at the entry's path in every container (not the init containers)."""
    spec = pod["spec"]
    seen: set[str] = set()
    for volume in job["spec"].get("volumes") or []:
        claim = volume.get("volumeClaimName") or ""
        if not claim or claim in seen:
            continue
        seen.add(claim)
        name = f"{job['metadata']['name']}-{random_suffix()}"
        spec.setdefault("volumes", []).append({"name": name, "persistentVolumeClaim": {"claimName": claim}})
        for container in spec.get("containers") or []:
            container.setdefault("volumeMounts", []).append({"name": name, "mountPath": volume["mountPath"]})
