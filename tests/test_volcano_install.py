"""Volcano from the user's chart or manifests on kind / existing clusters (conformance.impl.volcano_install):
the generated values, commands and manifests (helm, kind and Docker are not runnable here), and the
conf switch (ConfigMap + scheduler restart) against a real API server."""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess
from typing import Sequence

import kubernetes
import pytest
import yaml

from conformance.cluster import base
from conformance.impl import base as impl_base
from conformance.impl import registry
from conformance.impl import volcano_install as vi
from conformance.toolchain import install, versions

CONF = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}, {"plugins": [{"name": "predicates"}]}]}
HELM = "chart=./installer/helm/chart/volcano,images=localhost:5001/me,tag=dev-1,kind-cluster=vck"


def test_parse_accepts_the_documented_forms_and_explains_mistakes() -> None:
    spec = vi.parse("helm", HELM)
    assert (spec.source, spec.images, spec.kind_cluster, spec.release) == ("./installer/helm/chart/volcano", vi.Images("localhost:5001/me", "dev-1"), "vck", "volcano")
    assert vi.parse("manifests", "file=volcano-development.yaml,images=docker.io/volcanosh/,tag=v1.13.3").images.prefix == "docker.io/volcanosh"
    with pytest.raises(vi.InstallSpecError, match=r"missing images, tag; expected volcano-helm:chart=CHART"):
        vi.parse("helm", "chart=x")
    with pytest.raises(vi.InstallSpecError, match=r"unknown release; expected volcano-manifests:file=FILE"):
        vi.parse("manifests", "file=x,images=a/b,tag=t,release=r")
    with pytest.raises(vi.InstallSpecError, match=r"'chart' is not KEY=VALUE"):
        vi.parse("helm", "chart")


def test_helm_values_and_commands() -> None:
    spec = vi.parse("helm", HELM)
    values = vi.helm_values(spec, CONF)
    assert values["basic"] == {
        "image_registry": "localhost:5001",
        "scheduler_image_name": "me/vc-scheduler",
        "controller_image_name": "me/vc-controller-manager",
        "admission_image_name": "me/vc-webhook-manager",
        "image_tag_version": "dev-1",
        "image_pull_policy": "IfNotPresent",
    }
    assert yaml.safe_load(values["custom"]["scheduler_config_override"]) == CONF
    assert values["custom"]["leader_elect_enable"] is False
    assert vi.kind_load_commands(spec) == [
        ["kind", "load", "docker-image", f"localhost:5001/me/{name}:dev-1", "--name", "vck"] for name in ("vc-scheduler", "vc-controller-manager", "vc-webhook-manager")
    ]
    assert vi.helm_command(spec, "/tmp/v.yaml", "/k/config", "kind-vck") == [
        "helm", "upgrade", "--install", "volcano", "./installer/helm/chart/volcano", "--namespace", "volcano-system", "--create-namespace",
        "--values", "/tmp/v.yaml", "--wait", "--timeout", "300s", "--kubeconfig", "/k/config", "--kube-context", "kind-vck",
    ]
    text = vi.commands_text(spec, "/k/config", None)
    assert text.splitlines()[0] == "kind load docker-image localhost:5001/me/vc-scheduler:dev-1 --name vck" and "helm upgrade --install" in text


def test_manifests_get_the_users_images_and_the_scenarios_conf() -> None:
    upstream = """
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data: {volcano-scheduler.conf: 'actions: "enqueue, allocate, backfill"'}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: volcano-admission, namespace: volcano-system}
spec:
  template:
    spec:
      containers: [{name: admission, image: docker.io/volcanosh/vc-webhook-manager:v1.13.3}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: volcano-admission-init, namespace: volcano-system}
spec:
  template:
    spec:
      containers: [{name: main, image: docker.io/volcanosh/vc-webhook-manager:v1.13.3}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: other, namespace: volcano-system}
spec:
  template:
    spec:
      initContainers: [{name: init, image: busybox:1.36}]
      containers: [{name: x, image: registry.k8s.io/kube-state-metrics:v2}]
"""
    spec = vi.parse("manifests", "file=volcano.yaml,images=localhost:5001/me,tag=dev-1")
    out = vi.manifests(spec, vi.load_documents(upstream), CONF)
    assert yaml.safe_load(out[0]["data"][vi.CONF_KEY]) == CONF
    images = [c["image"] for obj in out[1:] for c in [*obj["spec"]["template"]["spec"].get("initContainers", []), *obj["spec"]["template"]["spec"]["containers"]]]
    assert images == ["localhost:5001/me/vc-webhook-manager:dev-1", "localhost:5001/me/vc-webhook-manager:dev-1", "busybox:1.36", "registry.k8s.io/kube-state-metrics:v2"]


@pytest.mark.cluster
def test_apply_conf_rewrites_the_configmap_and_rolls_the_scheduler_out(vck_api: kubernetes.client.ApiClient, vck_namespace: str) -> None:
    spec = dataclasses.replace(vi.parse("helm", HELM), namespace=vck_namespace)
    core, apps = kubernetes.client.CoreV1Api(vck_api), kubernetes.client.AppsV1Api(vck_api)
    # The embedded cluster has no kube-scheduler: the pods name their kwok node themselves.
    node = core.list_node().items[0].metadata.name
    core.create_namespaced_config_map(vck_namespace, {"metadata": {"name": spec.configmap}, "data": {vi.CONF_KEY: "actions: allocate\n"}})
    labels = {"app": "volcano-scheduler"}
    pod = {"metadata": {"labels": labels}, "spec": {"nodeName": node, "containers": [{"name": "scheduler", "image": spec.images.ref("scheduler")}]}}
    apps.create_namespaced_deployment(vck_namespace, {"metadata": {"name": spec.scheduler_deployment}, "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": pod}})
    vi.wait_rolled_out(apps, vck_namespace, spec.scheduler_deployment, 120)
    before = {rs.metadata.name for rs in apps.list_namespaced_replica_set(vck_namespace).items}

    vi.apply_conf(vck_api, spec, CONF, timeout_s=120)

    assert yaml.safe_load(core.read_namespaced_config_map(spec.configmap, vck_namespace).data[vi.CONF_KEY]) == CONF
    deployment = apps.read_namespaced_deployment(spec.scheduler_deployment, vck_namespace)
    assert vi.rollout_done(vck_api.sanitize_for_serialization(deployment))
    assert "vck.io/restartedAt" in deployment.spec.template.metadata.annotations
    after = {rs.metadata.name for rs in apps.list_namespaced_replica_set(vck_namespace).items}
    assert after - before, "the restart made a new ReplicaSet: the scheduler pod was replaced and reads the new conf"


class Recorder:
    """Stands in for helm / kind / kubectl where they cannot run; kubectl is run for real."""

    def __init__(self, kubectl: str | None = None) -> None:
        self.commands: list[list[str]] = []
        self.values: list[dict[str, object]] = []
        self.kubectl = kubectl

    def __call__(self, argv: Sequence[str], stdin: str | None) -> None:
        self.commands.append(list(argv))
        if argv[0] == "helm":
            self.values.append(yaml.safe_load(pathlib.Path(argv[argv.index("--values") + 1]).read_text()))
        if self.kubectl and argv[0] == self.kubectl:
            subprocess.run(list(argv), input=stdin, text=True, check=True, capture_output=True, timeout=120)


def test_helm_install_runs_kind_load_then_helm_with_the_scenarios_conf() -> None:
    recorder = Recorder()
    impl = vi.VolcanoInstalled(vi.parse("helm", HELM), frozenset({"plugin:gang"}), recorder)
    cluster = base.ClusterHandle(name="vck", backend="kind", kubeconfig=pathlib.Path("/k/config"), context="kind-vck")
    impl.ensure(cluster, CONF)
    assert [c[:3] for c in recorder.commands] == [["kind", "load", "docker-image"]] * 3 + [["helm", "upgrade", "--install"]]
    assert yaml.safe_load(recorder.values[0]["custom"]["scheduler_config_override"]) == CONF  # type: ignore[index]
    impl.ensure(cluster, CONF)
    assert len(recorder.commands) == 4, "the same conf on the same cluster changes nothing"
    assert impl.name == "volcano-helm:dev-1" and impl.versions()["volcano"] == "dev-1"


@pytest.mark.cluster
def test_manifests_install_applies_with_kubectl_and_switches_confs(vck_api: kubernetes.client.ApiClient, vck_namespace: str, vck_cluster: base.ClusterHandle, tmp_path: pathlib.Path) -> None:
    kubectl = install.cached(versions.component("kubectl"))
    assert kubectl is not None, "the toolchain installs kubectl"
    node = kubernetes.client.CoreV1Api(vck_api).list_node().items[0].metadata.name
    docs = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap", "namespace": vck_namespace}, "data": {vi.CONF_KEY: "actions: allocate\n"}}]
    for component, image in (("scheduler", "vc-scheduler"), ("controllers", "vc-controller-manager"), ("admission", "vc-webhook-manager")):
        labels = {"app": f"volcano-{component}"}
        docs.append({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"volcano-{component}", "namespace": vck_namespace},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {"nodeName": node, "containers": [{"name": "main", "image": f"docker.io/volcanosh/{image}:v1.13.3"}]}}},
        })
    source = tmp_path / "volcano.yaml"
    source.write_text(yaml.safe_dump_all(docs))
    spec = dataclasses.replace(vi.parse("manifests", f"file={source},images=localhost:5001/me,tag=dev-1"), namespace=vck_namespace)
    impl = vi.VolcanoInstalled(spec, frozenset(), Recorder(str(kubectl)), kubectl=str(kubectl))

    impl.ensure(vck_cluster, CONF)
    apps = kubernetes.client.AppsV1Api(vck_api)
    assert apps.read_namespaced_deployment("volcano-scheduler", vck_namespace).spec.template.spec.containers[0].image == "localhost:5001/me/vc-scheduler:dev-1"
    other = {**CONF, "actions": "allocate"}
    impl.ensure(vck_cluster, other)
    data = kubernetes.client.CoreV1Api(vck_api).read_namespaced_config_map("volcano-scheduler-configmap", vck_namespace).data
    assert yaml.safe_load(data[vi.CONF_KEY]) == other


def test_registry_builds_installed_volcano_and_explains_a_bad_value() -> None:
    impl = registry.implementation(f"volcano-helm:{HELM}")
    assert isinstance(impl, vi.VolcanoInstalled) and "plugin:gang" in impl.capabilities()
    assert "plugin:gpu-podaffinity" not in impl.capabilities()
    with pytest.raises(impl_base.ImplementationError, match=r"volcano-manifests:file=x.*missing images, tag"):
        registry.implementation("volcano-manifests:file=x")


def test_run_command_reports_the_tools_own_words() -> None:
    with pytest.raises(impl_base.ImplementationError, match=r"exited 3:\nno such chart"):
        vi.run_command(["sh", "-c", "echo no such chart >&2; exit 3"], None)
    with pytest.raises(impl_base.ImplementationError, match=r"is it installed and on PATH"):
        vi.run_command(["/nonexistent/helm", "version"], None)
