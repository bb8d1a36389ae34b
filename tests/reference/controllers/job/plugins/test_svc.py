"""The svc job plugin (reference_scheduler/controllers/job/plugins/svc.py) in memory, against
upstream's (plugins/svc/svc.go): the pod's hostname and subdomain, every task's hosts from a
ConfigMap mounted at /etc/volcano; the ConfigMap, a headless Service and a NetworkPolicy it owns;
its flags."""

from __future__ import annotations

import pytest

from reference_scheduler.controllers.job.plugins import svc
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task
from tests.reference.controllers.job.plugins import plugin_harness
from tests.reference.controllers.job.plugins.plugin_harness import (
    MASTER_WORKERS,
    SELECTOR,
    FlagsCase,
    ObjectsCase,
    PodCase,
    svc_env,
)

SVC_SPEC = {"clusterIP": "None", "selector": SELECTOR, "publishNotReadyAddresses": False}
NETWORK_POLICY = {
    "spec": {
        "podSelector": {"matchLabels": SELECTOR},
        "ingress": [{"from": [{"podSelector": {"matchLabels": SELECTOR}}]}],
        "policyTypes": ["Ingress"],
    }
}
MW_HOSTS = {
    "master.host": "tj-master-0.tj",
    "VC_MASTER_HOSTS": "tj-master-0.tj",
    "VC_MASTER_NUM": "1",
    "worker.host": "tj-worker-0.tj\ntj-worker-1.tj",
    "VC_WORKER_HOSTS": "tj-worker-0.tj,tj-worker-1.tj",
    "VC_WORKER_NUM": "2",
}

POD_CASES = [
    # svc (plugins/svc/svc.go): the pod's own name as hostname, the job as subdomain, every task's
    # hosts from the ConfigMap, mounted at /etc/volcano.
    PodCase(
        "svc-hostname-env-mount",
        {"svc": []},
        MASTER_WORKERS,
        "worker",
        {
            "hostname": "tj-worker-1",
            "subdomain": "tj",
            "env:main": svc_env("tj-svc", "MASTER", "WORKER"),
            "mounts:main": [("tj-svc", "/etc/volcano", None)],
            "volumes": [{"name": "tj-svc", "configMap": {"name": "tj-svc"}}],
        },
        index=1,
    ),
    PodCase("svc-template-names-kept", {"svc": []}, harness.job(task("worker", hostname="custom", subdomain="grp")), "worker", {"hostname": "custom", "subdomain": "grp"}),
    PodCase("svc-dashed-task-env", {"svc": []}, harness.job(task("data-loader")), "data-loader", {"env:main": svc_env("tj-svc", "DATA_LOADER")}),
    PodCase(
        "svc-init-containers-too",
        {"svc": []},
        harness.job(task("worker", initContainers=[{"name": "init", "image": "busybox"}])),
        "worker",
        {"init-env:init": svc_env("tj-svc", "WORKER")},
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_on_pod_create(case: PodCase) -> None:
    plugin_harness.check_pod(case)


OBJECT_CASES = [
    # svc: the hosts ConfigMap, a headless Service over the job's pods, a NetworkPolicy that lets
    # only them in.
    ObjectsCase(
        "svc-default",
        {"svc": []},
        MASTER_WORKERS,
        {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": SVC_SPEC}, "NetworkPolicy/tj": NETWORK_POLICY},
    ),
    ObjectsCase(
        "svc-publish-not-ready",
        {"svc": ["--publish-not-ready-addresses"]},
        MASTER_WORKERS,
        {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": {**SVC_SPEC, "publishNotReadyAddresses": True}}, "NetworkPolicy/tj": NETWORK_POLICY},
    ),
    ObjectsCase("svc-disable-network-policy", {"svc": ["--disable-network-policy"]}, MASTER_WORKERS, {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": SVC_SPEC}}),
    ObjectsCase(
        "svc-flags-with-values",
        {"svc": ["--publish-not-ready-addresses=true", "--disable-network-policy=false"]},
        MASTER_WORKERS,
        {"ConfigMap/tj-svc": {"data": MW_HOSTS}, "Service/tj": {"spec": {**SVC_SPEC, "publishNotReadyAddresses": True}}, "NetworkPolicy/tj": NETWORK_POLICY},
    ),
    # A template hostname names one host for every pod of its task.
    ObjectsCase(
        "svc-template-hostname-one-host",
        {"svc": ["--disable-network-policy"]},
        harness.job(task("worker", replicas=2, hostname="custom", subdomain="grp")),
        {"ConfigMap/tj-svc": {"data": {"worker.host": "custom.grp", "VC_WORKER_HOSTS": "custom.grp", "VC_WORKER_NUM": "1"}}, "Service/tj": {"spec": SVC_SPEC}},
    ),
    ObjectsCase(
        "svc-dashed-task-keys",
        {"svc": ["--disable-network-policy"]},
        harness.job(task("data-loader", replicas=2)),
        {"ConfigMap/tj-svc": {"data": {"data_loader.host": "tj-data-loader-0.tj\ntj-data-loader-1.tj", "VC_DATA_LOADER_HOSTS": "tj-data-loader-0.tj,tj-data-loader-1.tj", "VC_DATA_LOADER_NUM": "2"}}, "Service/tj": {"spec": SVC_SPEC}},
    ),
]


@pytest.mark.parametrize("case", OBJECT_CASES, ids=lambda c: c.id)
def test_objects(case: ObjectsCase) -> None:
    plugin_harness.check_objects(case)


FLAG_CASES = [
    FlagsCase("svc-defaults", svc.Svc, (), {"publish_not_ready_addresses": False, "disable_network_policy": False}),
    FlagsCase("svc-bare-bools", svc.Svc, ("--publish-not-ready-addresses", "--disable-network-policy"), {"publish_not_ready_addresses": True, "disable_network_policy": True}),
    FlagsCase("svc-go-bool-spellings", svc.Svc, ("--publish-not-ready-addresses=1", "--disable-network-policy=t"), {"publish_not_ready_addresses": True, "disable_network_policy": True}),
    FlagsCase("svc-false", svc.Svc, ("--publish-not-ready-addresses=false", "--disable-network-policy=0"), {"publish_not_ready_addresses": False, "disable_network_policy": False}),
]


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_flags(case: FlagsCase) -> None:
    plugin_harness.check_flags(case)
