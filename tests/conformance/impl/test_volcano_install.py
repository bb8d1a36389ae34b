"""Volcano installed from its chart or manifests on kind / existing clusters
(conformance.impl.volcano_install): the values, commands and manifests it generates, and the conf
switch (ConfigMap + scheduler restart) against a real API server. Volcano really installed on a
real kind cluster is tests/conformance/cluster/test_kind.py's (it needs Docker and Volcano's build)."""

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
from conformance.toolchain import versions

CONF = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}, {"plugins": [{"name": "predicates"}]}]}
HELM = "chart=./installer/helm/chart/volcano,images=localhost:5001/me,tag=dev-1,kind-cluster=vck"


def test_parse_accepts_the_documented_forms_and_explains_mistakes() -> None:
    spec = vi.parse("helm", HELM)
    assert (spec.source, spec.images, spec.kind_cluster, spec.release) == ("./installer/helm/chart/volcano", vi.Images("localhost:5001/me", "dev-1"), "vck", "volcano")
    images = vi.parse("manifests", "file=volcano-development.yaml,images=docker.io/volcanosh/,tag=v1.13.3").images
    assert images is not None and images.prefix == "docker.io/volcanosh"
    # Everything has a default: the pinned release, its own manifests, images built here.
    bare = vi.parse("manifests", "")
    assert (bare.source, bare.images, bare.tag, bare.kind_cluster) == (None, None, versions.VOLCANO_VERSION, None)
    with pytest.raises(vi.InstallSpecError, match=r"'dev' is not a Volcano release, so there is no release chart to default to: give chart="):
        vi.parse("helm", "images=a/b,tag=dev")
    with pytest.raises(vi.InstallSpecError, match=r"without images= the kit builds them from a Volcano release, and 'dev' is not one"):
        vi.parse("manifests", "file=x,tag=dev")
    with pytest.raises(vi.InstallSpecError, match=r"unknown release; expected volcano-manifests\[:file=FILE\]"):
        vi.parse("manifests", "file=x,images=a/b,tag=t,release=r")
    with pytest.raises(vi.InstallSpecError, match=r"'chart' is not KEY=VALUE"):
        vi.parse("helm", "chart")


def test_helm_values_and_commands() -> None:
    spec = vi.parse("helm", HELM)
    assert spec.images is not None
    values = vi.helm_values(spec, spec.images, CONF)
    assert values["basic"] == {
        "image_registry": "localhost:5001",
        "scheduler_image_name": "me/vc-scheduler",
        "controller_image_name": "me/vc-controller-manager",
        "admission_image_name": "me/vc-webhook-manager",
        "image_tag_version": "dev-1",
        "image_pull_policy": "IfNotPresent",
    }
    assert yaml.safe_load(values["custom"]["scheduler_config_override"]) == CONF
    assert values["custom"]["leader_elect_enable"] is False and "default_affinity" not in values["custom"]
    # Beside the kit's kwok nodes, Volcano's pods keep to the real ones.
    assert vi.helm_values(spec, spec.images, CONF, ("type:kwok",))["custom"]["default_affinity"] == vi.away_from_kit_nodes()
    assert vi.kind_load_commands(spec.images, spec.kind_cluster) == [
        ["kind", "load", "docker-image", f"localhost:5001/me/{name}:dev-1", "--name", "vck"] for name in ("vc-scheduler", "vc-controller-manager", "vc-webhook-manager")
    ]
    assert vi.helm_command(spec, "./installer/helm/chart/volcano", "/tmp/v.yaml", "/k/config", "kind-vck") == [
        "helm", "upgrade", "--install", "volcano", "./installer/helm/chart/volcano", "--namespace", "volcano-system", "--create-namespace",
        "--values", "/tmp/v.yaml", "--wait", "--timeout", "300s", "--kubeconfig", "/k/config", "--kube-context", "kind-vck",
    ]
    text = vi.commands_text(spec, spec.images, "./installer/helm/chart/volcano", "/k/config", None)
    assert text.splitlines()[0] == "kind load docker-image localhost:5001/me/vc-scheduler:dev-1 --name vck" and "helm upgrade --install" in text


def test_manifests_get_the_images_the_conf_and_the_kits_placement() -> None:
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
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: volcano-scheduler, namespace: volcano-system}
spec:
  template:
    spec:
      containers:
      - name: volcano-scheduler
        image: docker.io/volcanosh/vc-scheduler:v1.13.3
        args: [--logtostderr, --leader-elect=false, -v=3, 2>&1]
"""
    spec = vi.parse("manifests", "file=volcano.yaml,images=localhost:5001/me,tag=dev-1")
    assert spec.images is not None
    out = vi.manifests(spec, spec.images, vi.load_documents(upstream), CONF)
    assert yaml.safe_load(out[0]["data"][vi.CONF_KEY]) == CONF
    images = [c["image"] for obj in out[1:] for c in [*obj["spec"]["template"]["spec"].get("initContainers", []), *obj["spec"]["template"]["spec"]["containers"]]]
    assert images == [
        "localhost:5001/me/vc-webhook-manager:dev-1", "localhost:5001/me/vc-webhook-manager:dev-1", "busybox:1.36",
        "registry.k8s.io/kube-state-metrics:v2", "localhost:5001/me/vc-scheduler:dev-1",
    ]
    scheduler = out[4]
    # Recreate always (never two schedulers at once); no placement where every node is the kit's.
    assert scheduler["spec"]["strategy"] == {"type": "Recreate"}
    assert scheduler["spec"]["template"]["spec"]["containers"][0]["args"] == ["--logtostderr", "--leader-elect=false", "-v=3", "2>&1"]
    assert all("affinity" not in obj["spec"]["template"]["spec"] for obj in out[1:])

    beside = vi.manifests(spec, spec.images, vi.load_documents(upstream), CONF, ("type:kwok",))
    assert beside[4]["spec"]["template"]["spec"]["containers"][0]["args"] == ["--logtostderr", "--leader-elect=false", "-v=3", "--node-selector=type:kwok", "2>&1"]
    assert all(obj["spec"]["template"]["spec"]["affinity"] == vi.away_from_kit_nodes() for obj in beside[1:])
    # Adapting twice changes nothing the second time.
    assert not vi.adapt_scheduler(beside[4], ("type:kwok",))


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


def test_installed_volcano_says_where_it_cannot_run() -> None:
    recorder = Recorder()
    impl = vi.VolcanoInstalled(vi.parse("manifests", ""), frozenset(), recorder, kubectl="kubectl", kind="kind")
    embedded = base.ClusterHandle(name="vck", backend="embedded", kubeconfig=pathlib.Path("/k/config"))
    with pytest.raises(impl_base.ImplementationError, match=r"the embedded cluster has no kubelet: use --backend kind"):
        impl.ensure(embedded, CONF)
    existing = dataclasses.replace(embedded, backend="existing")
    with pytest.raises(impl_base.ImplementationError, match=r"without images= the kit builds Volcano's images and loads them into a kind cluster; this cluster is not one"):
        impl.ensure(existing, CONF)
    assert recorder.commands == [], "nothing ran before the refusal"
    assert impl.name == f"volcano-manifests:{versions.VOLCANO_VERSION}"
    assert impl.versions()["source"] == f"the release's {vi.MANIFESTS_FILE}"


def test_registry_builds_installed_volcano_and_explains_a_bad_value() -> None:
    impl = registry.implementation(f"volcano-helm:{HELM}")
    assert isinstance(impl, vi.VolcanoInstalled) and "plugin:gang" in impl.capabilities()
    assert "plugin:gpu-podaffinity" not in impl.capabilities()
    assert isinstance(registry.implementation("volcano-manifests"), vi.VolcanoInstalled)
    with pytest.raises(impl_base.ImplementationError, match=r"volcano-manifests:file=x,tag=dev.*'dev' is not one"):
        registry.implementation("volcano-manifests:file=x,tag=dev")


def test_run_command_reports_the_tools_own_words() -> None:
    with pytest.raises(impl_base.ImplementationError, match=r"exited 3:\nno such chart"):
        vi.run_command(["sh", "-c", "echo no such chart >&2; exit 3"], None)
    with pytest.raises(impl_base.ImplementationError, match=r"is it installed and on PATH"):
        vi.run_command(["/nonexistent/helm", "version"], None)


@pytest.mark.cluster
def test_stopping_keeps_every_volcano_pods_log_or_why_it_could_not(vck_cluster: base.ClusterHandle, vck_api: kubernetes.client.ApiClient, vck_namespace: str) -> None:
    """The run's `logs/<worker>/` gets a file per container of the release's namespace, read when
    the run stops (before a kind cluster goes). kwok's pods have no container runtime behind them,
    so each file says why its log could not be read: the run's teardown goes on regardless."""
    core = kubernetes.client.CoreV1Api(vck_api)
    node = core.list_node().items[0].metadata.name
    containers = [{"name": "scheduler", "image": "volcanosh/vc-scheduler:v1"}, {"name": "sidecar", "image": "busybox"}]
    core.create_namespaced_pod(vck_namespace, {"metadata": {"name": "volcano-scheduler-0"}, "spec": {"nodeName": node, "containers": containers}})
    core.create_namespaced_pod(vck_namespace, {"metadata": {"name": "volcano-admission-0"}, "spec": {"nodeName": node, "containers": containers[:1]}})
    impl = vi.VolcanoInstalled(dataclasses.replace(vi.parse("helm", HELM), namespace=vck_namespace), frozenset(), Recorder())
    assert impl.logs() == {}
    impl._installed_on = vck_cluster  # as after ensure(): installed on this cluster
    impl.stop()
    logs = impl.logs()
    assert sorted(logs) == ["volcano-admission-0", "volcano-scheduler-0-scheduler", "volcano-scheduler-0-sidecar"]
    assert "could not read the log of volcano-scheduler-0/sidecar" in logs["volcano-scheduler-0-sidecar"].read_text()
    folder = logs["volcano-admission-0"].parent
    impl.release()
    assert not folder.exists()
