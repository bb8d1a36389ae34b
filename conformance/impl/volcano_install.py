"""Volcano on a kind or existing cluster: the helm chart or the manifests the user points to, run
with the images the user provides; each scenario's scheduler conf goes into Volcano's own ConfigMap.

Nothing here downloads anything: the chart (a folder or a chart reference helm can resolve), the
manifests file (such as Volcano's `installer/volcano-development.yaml`) and the images are the
user's. On kind, the images are loaded into the cluster's nodes first (`kind load docker-image`),
so they are never pulled.

    volcano-helm:chart=installer/helm/chart/volcano,images=docker.io/volcanosh,tag=v1.13.3[,kind-cluster=vck]
    volcano-manifests:file=installer/volcano-development.yaml,images=my.registry/volcano,tag=dev

Upstream: installer/helm/chart/volcano (values.yaml: basic.*, custom.scheduler_config_override,
custom.leader_elect_enable) and installer/volcano-development.yaml (the chart rendered with the
release name `volcano`, so both name the ConfigMap volcano-scheduler-configmap and the Deployment
volcano-scheduler).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import pathlib
import subprocess
import tempfile
from typing import Any, Callable, Iterable, Mapping, Sequence

import kubernetes
import yaml

from conformance.cluster import kube
from conformance.impl import base as impl_base

RELEASE = "volcano"
NAMESPACE = "volcano-system"
CONF_KEY = "volcano-scheduler.conf"
# Component -> the image name Volcano publishes it under (values.yaml basic.*_image_name).
IMAGE_NAMES = {"scheduler": "vc-scheduler", "controller": "vc-controller-manager", "webhook": "vc-webhook-manager"}
ROLLOUT_TIMEOUT_S = 300.0


class InstallSpecError(ValueError):
    """The --vck-impl value does not say what to install; the message shows the expected form."""


@dataclasses.dataclass(frozen=True)
class Images:
    # Registry and repository prefix, such as docker.io/volcanosh or localhost:5001/me.
    prefix: str
    tag: str

    def ref(self, component: str) -> str:
        return f"{self.prefix}/{IMAGE_NAMES[component]}:{self.tag}"

    def refs(self) -> list[str]:
        return [self.ref(c) for c in IMAGE_NAMES]


@dataclasses.dataclass(frozen=True)
class InstallSpec:
    method: str  # "helm" or "manifests"
    # The chart (helm) or the manifests file (manifests).
    source: str
    images: Images
    kind_cluster: str | None = None
    release: str = RELEASE
    namespace: str = NAMESPACE

    @property
    def configmap(self) -> str:
        return f"{self.release}-scheduler-configmap"

    @property
    def scheduler_deployment(self) -> str:
        return f"{self.release}-scheduler"


FORMS = {
    "helm": "volcano-helm:chart=CHART,images=REGISTRY/PREFIX,tag=TAG[,kind-cluster=NAME][,release=NAME]",
    "manifests": "volcano-manifests:file=FILE,images=REGISTRY/PREFIX,tag=TAG[,kind-cluster=NAME]",
}


def parse(method: str, arg: str) -> InstallSpec:
    """The InstallSpec a `volcano-helm:` / `volcano-manifests:` value describes."""
    pairs: dict[str, str] = {}
    for part in filter(None, arg.split(",")):
        key, sep, value = part.partition("=")
        if not sep or not value:
            raise InstallSpecError(f"{part!r} is not KEY=VALUE; expected {FORMS[method]}")
        pairs[key.strip()] = value.strip()
    source_key = "chart" if method == "helm" else "file"
    allowed = {source_key, "images", "tag", "kind-cluster"} | ({"release"} if method == "helm" else set())
    unknown = sorted(set(pairs) - allowed)
    missing = [k for k in (source_key, "images", "tag") if k not in pairs]
    if unknown or missing:
        problem = f"unknown {', '.join(unknown)}" if unknown else f"missing {', '.join(missing)}"
        raise InstallSpecError(f"{problem}; expected {FORMS[method]}")
    return InstallSpec(method, pairs[source_key], Images(pairs["images"].rstrip("/"), pairs["tag"]), pairs.get("kind-cluster"), pairs.get("release", RELEASE))


def conf_text(conf: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(conf), sort_keys=False)


def helm_values(spec: InstallSpec, conf: Mapping[str, Any]) -> dict[str, Any]:
    """The chart values: the user's images (never pulled when loaded into kind), the scenario's
    scheduler conf, leader election off (one replica of each, restarted between confs)."""
    registry, _, repository = spec.images.prefix.partition("/")
    prefix = f"{repository}/" if repository else ""
    return {
        "basic": {
            "image_registry": registry,
            "scheduler_image_name": f"{prefix}{IMAGE_NAMES['scheduler']}",
            "controller_image_name": f"{prefix}{IMAGE_NAMES['controller']}",
            "admission_image_name": f"{prefix}{IMAGE_NAMES['webhook']}",
            "image_tag_version": spec.images.tag,
            "image_pull_policy": "IfNotPresent",
        },
        "custom": {"scheduler_config_override": conf_text(conf), "leader_elect_enable": False},
    }


def kind_load_commands(spec: InstallSpec, kind_binary: str = "kind") -> list[list[str]]:
    if spec.kind_cluster is None:
        return []
    return [[kind_binary, "load", "docker-image", ref, "--name", spec.kind_cluster] for ref in spec.images.refs()]


def helm_command(spec: InstallSpec, values_path: str, kubeconfig: str, context: str | None, helm_binary: str = "helm") -> list[str]:
    command = [helm_binary, "upgrade", "--install", spec.release, spec.source, "--namespace", spec.namespace, "--create-namespace", "--values", values_path, "--wait", "--timeout", f"{int(ROLLOUT_TIMEOUT_S)}s", "--kubeconfig", kubeconfig]
    return command + (["--kube-context", context] if context else [])


def _component_of(image: str) -> str | None:
    name = image.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]
    return next((c for c, n in IMAGE_NAMES.items() if n == name), None)


def manifests(spec: InstallSpec, documents: Iterable[Any], conf: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The manifests with every Volcano image replaced by the user's and the scheduler ConfigMap
    holding the scenario's conf; every other object as given."""
    out = []
    for doc in documents:
        if not isinstance(doc, Mapping):
            continue
        obj = copy.deepcopy(dict(doc))
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "ConfigMap" and meta.get("name") == spec.configmap:
            obj["data"] = {**(obj.get("data") or {}), CONF_KEY: conf_text(conf)}
        pod_spec = (((obj.get("spec") or {}).get("template") or {}).get("spec")) or {}
        for container in [*(pod_spec.get("initContainers") or []), *(pod_spec.get("containers") or [])]:
            component = _component_of(str(container.get("image", "")))
            if component is not None:
                container["image"] = spec.images.ref(component)
                container["imagePullPolicy"] = "IfNotPresent"
        out.append(obj)
    return out


def apply_conf(api: kubernetes.client.ApiClient, spec: InstallSpec, conf: Mapping[str, Any], timeout_s: float = ROLLOUT_TIMEOUT_S, progress: Callable[[str], None] = lambda _: None) -> None:
    """Give the running scheduler another conf: write it into Volcano's ConfigMap, restart the
    scheduler Deployment (a mounted ConfigMap reaches the pod only after the kubelet's next sync,
    so waiting for Volcano's file watch would be slow and unobservable), and wait until the
    rollout is done."""
    core = kubernetes.client.CoreV1Api(api)
    apps = kubernetes.client.AppsV1Api(api)
    core.patch_namespaced_config_map(spec.configmap, spec.namespace, {"data": {CONF_KEY: conf_text(conf)}})
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat()
    apps.patch_namespaced_deployment(spec.scheduler_deployment, spec.namespace, {"spec": {"template": {"metadata": {"annotations": {"vck.io/restartedAt": stamp}}}}})
    progress(f"restarting {spec.namespace}/{spec.scheduler_deployment} with the new conf")
    wait_rolled_out(apps, spec.namespace, spec.scheduler_deployment, timeout_s)


def rollout_done(deployment: Mapping[str, Any]) -> bool:
    """kubectl rollout status's rule: the controller saw this generation and every replica is
    updated and available, with no old one left."""
    status = deployment.get("status") or {}
    spec_replicas = (deployment.get("spec") or {}).get("replicas")
    want = 1 if spec_replicas is None else spec_replicas
    return bool(
        status.get("observedGeneration", 0) >= deployment["metadata"].get("generation", 0)
        and status.get("updatedReplicas", 0) == want
        and status.get("replicas", 0) == want
        and status.get("availableReplicas", 0) == want
    )


def wait_rolled_out(apps: kubernetes.client.AppsV1Api, namespace: str, name: str, timeout_s: float) -> None:
    kube.watch_until(
        apps.list_namespaced_deployment,
        lambda state: name in state and rollout_done(state[name]),
        timeout_s,
        f"deployment {namespace}/{name} to roll out",
        namespace=namespace,
    )


def commands_text(spec: InstallSpec, kubeconfig: str, context: str | None, values_path: str = "values.yaml", manifests_path: str = "volcano.yaml") -> str:
    """The commands the kit runs, for a user who wants to run them by hand."""
    lines = [" ".join(c) for c in kind_load_commands(spec)]
    if spec.method == "helm":
        lines.append(" ".join(helm_command(spec, values_path, kubeconfig, context)))
    else:
        lines.append(f"kubectl --kubeconfig {kubeconfig}{f' --context {context}' if context else ''} apply --server-side -f {manifests_path}")
    return "\n".join(lines)


def load_documents(text: str) -> Sequence[Any]:
    return list(yaml.safe_load_all(text))


def run_command(argv: Sequence[str], stdin: str | None) -> None:
    """Run helm / kind / kubectl; ImplementationError with the tool's own last lines on failure."""
    try:
        proc = subprocess.run(list(argv), input=stdin, capture_output=True, text=True, timeout=ROLLOUT_TIMEOUT_S + 60)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise impl_base.ImplementationError(f"`{argv[0]}` could not run: {err}; is it installed and on PATH?") from err
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-10:])
        raise impl_base.ImplementationError(f"`{' '.join(argv[:4])} ...` exited {proc.returncode}:\n{tail}")


class VolcanoInstalled:
    """`volcano-helm:...` / `volcano-manifests:...`: installs Volcano once per cluster with the
    user's chart or manifests and images, then switches the scheduler's conf per scenario. It
    leaves Volcano installed when the run ends (the user's cluster; `helm uninstall volcano -n
    volcano-system` removes it). Claims what the `volcano` adapter claims for the same build."""

    def __init__(self, spec: InstallSpec, capabilities: frozenset[str], runner: Callable[[Sequence[str], str | None], None], kubectl: str = "kubectl") -> None:
        self.spec = spec
        self._caps = capabilities
        # Runs one command (argv, stdin text or None); raises on a non-zero exit.
        self._run = runner
        self._kubectl = kubectl
        self.name = f"volcano-{spec.method}:{spec.images.tag}"
        self._installed_on: Any = None
        self._conf_key: str | None = None

    def capabilities(self) -> frozenset[str]:
        return self._caps

    def versions(self) -> dict[str, str]:
        return {"volcano": self.spec.images.tag, "images": self.spec.images.prefix, "source": self.spec.source}

    def health(self) -> str | None:
        return None

    def stop(self) -> None:
        self._installed_on = None
        self._conf_key = None

    def ensure(self, cluster: Any, scheduler_conf: Mapping[str, Any] | None) -> None:
        conf = dict(scheduler_conf or impl_base.DEFAULT_SCHEDULER_CONF)
        key = conf_text(conf)
        if self._installed_on != cluster:
            self._install(cluster, conf)
            self._installed_on = cluster
        elif key != self._conf_key:
            apply_conf(kube.client(cluster.kubeconfig, cluster.context), self.spec, conf)
        self._conf_key = key

    def _install(self, cluster: Any, conf: Mapping[str, Any]) -> None:
        for command in kind_load_commands(self.spec):
            self._run(command, None)
        kubeconfig, context = str(cluster.kubeconfig), cluster.context
        if self.spec.method == "helm":
            with tempfile.TemporaryDirectory(prefix="vck-volcano-") as tmp:
                values = pathlib.Path(tmp) / "values.yaml"
                values.write_text(yaml.safe_dump(helm_values(self.spec, conf), sort_keys=False))
                self._run(helm_command(self.spec, str(values), kubeconfig, context), None)
            return
        documents = load_documents(pathlib.Path(self.spec.source).read_text())
        text = yaml.safe_dump_all(manifests(self.spec, documents, conf), sort_keys=False)
        command = [self._kubectl, "--kubeconfig", kubeconfig, *(["--context", context] if context else []), "apply", "--server-side", "-f", "-"]
        self._run(command, text)
        apps = kubernetes.client.AppsV1Api(kube.client(cluster.kubeconfig, cluster.context))
        for component in ("scheduler", "controllers", "admission"):
            wait_rolled_out(apps, self.spec.namespace, f"{self.spec.release}-{component}", ROLLOUT_TIMEOUT_S)
