"""Volcano installed in a kind or existing cluster, from its helm chart or its manifests; each
scenario's scheduler conf goes into Volcano's own ConfigMap.

    volcano-manifests[:file=FILE][,images=REGISTRY/PREFIX][,tag=TAG][,kind-cluster=NAME]
    volcano-helm[:chart=CHART][,images=REGISTRY/PREFIX][,tag=TAG][,kind-cluster=NAME][,release=NAME]

Every part has a default, so `volcano-manifests` alone installs Volcano v1.13.3 on a kind cluster:
- tag: the pinned Volcano release (v1.13.3);
- file / chart: that release's own `installer/volcano-development.yaml` / `installer/helm/chart/
  volcano`, read from its Go module (the download the `volcano` adapter's build uses);
- images: the user's (on kind, loaded into the nodes with `kind load docker-image`, never pulled);
  without `images=`, on kind, built here from the release's binaries (volcano_images), which needs
  no registry;
- kind-cluster: the run's own cluster when the backend is kind.

On a cluster with the kit's kwok nodes beside real ones (kind, existing), Volcano's own pods are
kept to the real nodes (the kwok nodes have no kubelet to run them) and the scheduler to the kit's
nodes (`--node-selector`, as the `volcano` adapter runs it); the scheduler's Deployment is
restarted with `Recreate`, so two schedulers never run at once when a scenario changes its conf.

Upstream: installer/helm/chart/volcano (values.yaml: basic.*, custom.scheduler_config_override,
custom.leader_elect_enable, custom.default_affinity) and installer/volcano-development.yaml (the
chart rendered with the release name `volcano`, so both name the ConfigMap
volcano-scheduler-configmap and the Deployment volcano-scheduler).
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import pathlib
import subprocess
import sys
import tempfile
from typing import Any, Callable, Iterable, Mapping, Sequence, cast

import kubernetes
import urllib3
import yaml

from conformance.cluster import base, docker, kube, nodes
from conformance.impl import base as impl_base
from conformance.impl import queues, volcano_images, volcano_webhooks
from conformance.impl.volcano_images import IMAGE_NAMES, Images
from conformance.scenario import releases
from conformance.toolchain import errors, install, versions, volcano, volcano_resolve

RELEASE = "volcano"
NAMESPACE = "volcano-system"
CONF_KEY = "volcano-scheduler.conf"
ROLLOUT_TIMEOUT_S = 300.0
READY_TIMEOUT_S = 120.0
# Where the release keeps what the kit installs from (upstream: installer/).
MANIFESTS_FILE = "installer/volcano-development.yaml"
CHART_FOLDER = "installer/helm/chart/volcano"
# vc-scheduler's log line once its cache is synced and it schedules (pkg/scheduler/scheduler.go).
SCHEDULER_READY = "Scheduler completes Initialization and start to run"


class InstallSpecError(ValueError):
    """The --vck-impl value does not say what to install; the message shows the expected form."""


@dataclasses.dataclass(frozen=True)
class InstallSpec:
    method: str  # "helm" or "manifests"
    # The chart (helm) or the manifests file (manifests); None: the release's own, from its module.
    source: str | None
    # The user's images; None: built here from the release's binaries (kind only).
    images: Images | None
    tag: str = versions.VOLCANO_VERSION
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
    "helm": "volcano-helm[:chart=CHART][,images=REGISTRY/PREFIX][,tag=TAG][,kind-cluster=NAME][,release=NAME]",
    "manifests": "volcano-manifests[:file=FILE][,images=REGISTRY/PREFIX][,tag=TAG][,kind-cluster=NAME]",
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
    if unknown:
        raise InstallSpecError(f"unknown {', '.join(unknown)}; expected {FORMS[method]}")
    tag = pairs.get("tag", versions.VOLCANO_VERSION)
    source = pairs.get(source_key)
    if source is None:
        try:
            volcano.check_version(tag)
        except errors.ToolchainError as err:
            raise InstallSpecError(f"tag {tag!r} is not a Volcano release, so there is no release {source_key} to default to: give {source_key}=") from err
    images = Images(pairs["images"].rstrip("/"), tag) if "images" in pairs else None
    if images is None and source is not None:
        try:
            volcano.check_version(tag)
        except errors.ToolchainError as err:
            raise InstallSpecError(f"without images= the kit builds them from a Volcano release, and {tag!r} is not one: give images= or a release tag") from err
    return InstallSpec(method, source, images, tag, pairs.get("kind-cluster"), pairs.get("release", RELEASE))


def conf_text(conf: Mapping[str, Any]) -> str:
    return cast(str, yaml.safe_dump(dict(conf), sort_keys=False))


def away_from_kit_nodes() -> dict[str, Any]:
    """The affinity that keeps a pod off the kit's kwok nodes (no kubelet would run it there)."""
    key, value = nodes.KIT_NODE_LABEL
    term = {"matchExpressions": [{"key": key, "operator": "NotIn", "values": [value]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def helm_values(spec: InstallSpec, images: Images, conf: Mapping[str, Any], node_selector: Sequence[str] = ()) -> dict[str, Any]:
    """The chart values: the images (never pulled when loaded into kind), the scenario's scheduler
    conf, leader election off (one replica of each, restarted between confs), and Volcano's pods
    kept off the kit's nodes where the cluster has both."""
    registry, _, repository = images.prefix.partition("/")
    prefix = f"{repository}/" if repository else ""
    custom: dict[str, Any] = {"scheduler_config_override": conf_text(conf), "leader_elect_enable": False}
    if node_selector:
        custom["default_affinity"] = away_from_kit_nodes()
    return {
        "basic": {
            "image_registry": registry,
            "scheduler_image_name": f"{prefix}{IMAGE_NAMES['scheduler']}",
            "controller_image_name": f"{prefix}{IMAGE_NAMES['controller']}",
            "admission_image_name": f"{prefix}{IMAGE_NAMES['webhook']}",
            "image_tag_version": images.tag,
            "image_pull_policy": "IfNotPresent",
        },
        "custom": custom,
    }


def kind_load_commands(images: Images, kind_cluster: str | None, kind_binary: str = "kind") -> list[list[str]]:
    if kind_cluster is None:
        return []
    return [[kind_binary, "load", "docker-image", ref, "--name", kind_cluster] for ref in images.refs()]


def helm_command(spec: InstallSpec, chart: str, values_path: str, kubeconfig: str, context: str | None, helm_binary: str = "helm") -> list[str]:
    command = [helm_binary, "upgrade", "--install", spec.release, chart, "--namespace", spec.namespace, "--create-namespace", "--values", values_path, "--wait", "--timeout", f"{int(ROLLOUT_TIMEOUT_S)}s", "--kubeconfig", kubeconfig]
    return command + (["--kube-context", context] if context else [])


def _component_of(image: str) -> str | None:
    name = image.rsplit("/", 1)[-1].split("@", 1)[0].split(":", 1)[0]
    return next((c for c, n in IMAGE_NAMES.items() if n == name), None)


def _pod_spec(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec")
    return spec if isinstance(spec, dict) else None


def adapt_scheduler(deployment: dict[str, Any], node_selector: Sequence[str]) -> bool:
    """Make Volcano's scheduler Deployment fit the kit, in place: `Recreate` (the old scheduler is
    gone before the new one starts, so a conf switch never runs two) and the scheduler kept to
    the kit's nodes with vc-scheduler's own `--node-selector`. True when anything changed."""
    spec = deployment.setdefault("spec", {})
    changed = (spec.get("strategy") or {}).get("type") != "Recreate"
    spec["strategy"] = {"type": "Recreate"}
    for container in (_pod_spec(deployment) or {}).get("containers") or []:
        if _component_of(str(container.get("image", ""))) != "scheduler":
            continue
        args = list(container.get("args") or [])
        wanted = [f"--node-selector={item}" for item in node_selector if f"--node-selector={item}" not in args]
        if wanted:
            # Before a trailing `2>&1`, which the manifests pass as an argument (it is ignored).
            at = args.index("2>&1") if "2>&1" in args else len(args)
            container["args"] = args[:at] + wanted + args[at:]
            changed = True
    return changed


def manifests(spec: InstallSpec, images: Images, documents: Iterable[Any], conf: Mapping[str, Any], node_selector: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The manifests with every Volcano image replaced by `images`, the scheduler ConfigMap holding
    the scenario's conf, the scheduler adapted (adapt_scheduler) and, where the cluster has kit
    nodes, every pod kept off them; every other object as given."""
    out = []
    for doc in documents:
        if not isinstance(doc, Mapping):
            continue
        obj = copy.deepcopy(dict(doc))
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "ConfigMap" and meta.get("name") == spec.configmap:
            obj["data"] = {**(obj.get("data") or {}), CONF_KEY: conf_text(conf)}
        pod_spec = _pod_spec(obj)
        if pod_spec is not None:
            for container in [*(pod_spec.get("initContainers") or []), *(pod_spec.get("containers") or [])]:
                component = _component_of(str(container.get("image", "")))
                if component is not None:
                    container["image"] = images.ref(component)
                    container["imagePullPolicy"] = "IfNotPresent"
            if node_selector:
                pod_spec["affinity"] = away_from_kit_nodes()
        if obj.get("kind") == "Deployment" and meta.get("name") == spec.scheduler_deployment:
            adapt_scheduler(obj, node_selector)
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


def _running_pod(state: Mapping[str, Any], template_hash: str) -> str | None:
    for name, pod in state.items():
        labels = pod["metadata"].get("labels") or {}
        running = any("running" in (c.get("state") or {}) for c in (pod.get("status") or {}).get("containerStatuses") or [])
        if labels.get("pod-template-hash") == template_hash and running and not pod["metadata"].get("deletionTimestamp"):
            return str(name)
    return None


def wait_scheduler_ready(api: kubernetes.client.ApiClient, spec: InstallSpec, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Until the scheduler pod of the Deployment's current ReplicaSet says it schedules: a pod that
    runs has not yet synced its cache (vc-scheduler waits for it before its first cycle)."""
    apps, core = kubernetes.client.AppsV1Api(api), kubernetes.client.CoreV1Api(api)
    deployment = apps.read_namespaced_deployment(spec.scheduler_deployment, spec.namespace)
    selector = ",".join(f"{k}={v}" for k, v in (deployment.spec.selector.match_labels or {}).items())
    current = [rs for rs in apps.list_namespaced_replica_set(spec.namespace, label_selector=selector).items if (rs.spec.replicas or 0) > 0]
    if len(current) != 1:
        raise impl_base.ImplementationError(f"{spec.namespace}/{spec.scheduler_deployment}: expected one active ReplicaSet, found {len(current)}")
    template_hash = (kube.meta(current[0]).labels or {})["pod-template-hash"]
    state = kube.watch_until(
        core.list_namespaced_pod,
        lambda s: _running_pod(s, template_hash) is not None,
        timeout_s,
        f"a running pod of {spec.namespace}/{spec.scheduler_deployment}",
        namespace=spec.namespace, label_selector=selector,
    )
    pod = _running_pod(state, template_hash)
    assert pod is not None
    # The log, followed until the line (the API server closes the stream at the deadline).
    # Typed as the preloaded text; without preloading the client returns urllib3's response.
    stream = cast(urllib3.BaseHTTPResponse, core.read_namespaced_pod_log(pod, spec.namespace, follow=True, _preload_content=False, _request_timeout=timeout_s))
    try:
        for line in stream.stream():
            if SCHEDULER_READY.encode() in line:
                return
    except Exception as err:  # urllib3's read timeout: the deadline passed
        raise impl_base.ImplementationError(f"{spec.namespace}/{pod} did not say it schedules within {timeout_s:.0f}s: {err}") from err
    finally:
        stream.release_conn()
    raise impl_base.ImplementationError(f"{spec.namespace}/{pod}: its log ended before it said it schedules")


def commands_text(spec: InstallSpec, images: Images, source: str, kubeconfig: str, context: str | None, values_path: str = "values.yaml", manifests_path: str = "volcano.yaml") -> str:
    """The commands the kit runs, for a user who wants to run them by hand."""
    lines = [" ".join(c) for c in kind_load_commands(images, spec.kind_cluster)]
    if spec.method == "helm":
        lines.append(" ".join(helm_command(spec, source, values_path, kubeconfig, context)))
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


def toolchain_binary(name: str) -> str:
    """kind, kubectl or helm from the kit's toolchain (built from Go modules where not downloaded)."""
    try:
        return str(install.binary(name))
    except errors.ToolchainError as err:
        raise impl_base.ImplementationError(f"{name}: {err}") from err


class VolcanoInstalled:
    """`volcano-helm...` / `volcano-manifests...`: installs Volcano once per cluster with the
    chart or manifests and images, then switches the scheduler's conf per scenario. It leaves
    Volcano installed when the run ends (on an existing cluster, the user's; `kubectl delete -f` the
    manifests or `helm uninstall volcano -n volcano-system` removes it). Claims what the `volcano`
    adapter claims for the same build."""

    def __init__(
        self,
        spec: InstallSpec,
        capabilities: frozenset[str] | Callable[[], frozenset[str]],
        runner: Callable[[Sequence[str], str | None], None],
        kubectl: str | None = None,
        kind: str | None = None,
        helm: str | None = None,
        build_images: Callable[[str], Images] | None = None,
    ) -> None:
        self.spec = spec
        # The claims, or how to find them once asked (reading the release's source is not free).
        self._caps = capabilities
        # Runs one command (argv, stdin text or None); raises on a non-zero exit.
        self._run = runner
        # None: the toolchain's, resolved when first needed.
        self._kubectl = kubectl
        self._kind = kind
        self._helm = helm
        self._build_images = build_images or _build_images
        self.name = f"volcano-{spec.method}:{spec.tag}"
        self._installed_on: Any = None
        self._conf_key: str | None = None
        self._images: Images | None = spec.images
        self._wait_default_queues = queues.DefaultQueueWait()
        # Volcano's pod logs, read when the run stops (the cluster may go right after).
        self._logs_dir: tempfile.TemporaryDirectory[str] | None = None

    def capabilities(self) -> frozenset[str]:
        if callable(self._caps):
            self._caps = self._caps()
        return self._caps

    def prepare(self, progress: Callable[[str], None]) -> None:
        """Find the claims once, before any worker starts: reading the release's source may fetch
        or extract it into the shared cache, which is done once, here; the workers then find it."""
        self.capabilities()

    def volcano_release(self) -> str | None:
        """The tag's release; None for a tag that is not one (a private build's)."""
        return self.spec.tag if releases.parse_release(self.spec.tag) is not None else None

    def versions(self) -> dict[str, str]:
        images = self._images.prefix if self._images else "built here from the release's binaries"
        return {"volcano": self.spec.tag, "images": images, "source": self.spec.source or f"the release's {self._default_source_name()}"}

    def health(self) -> str | None:
        return None

    def stop(self) -> None:
        if self._installed_on is not None:
            self._save_logs(self._installed_on)
        self._installed_on = None
        self._conf_key = None

    def logs(self) -> dict[str, pathlib.Path]:
        """The log of each of Volcano's pods as it was when the run stopped (a scheduler replaced
        for a new conf took its earlier lines with it): the report's `logs/<worker>/`."""
        if self._logs_dir is None:
            return {}
        # Named by pod (and container): volcano-scheduler-<hash>.log, ...
        return {path.stem: path for path in sorted(pathlib.Path(self._logs_dir.name).glob("*.log"))}

    def release(self) -> None:
        if self._logs_dir is not None:
            self._logs_dir.cleanup()
            self._logs_dir = None

    def _save_logs(self, cluster: base.ClusterHandle) -> None:
        """Read every container log of the release's namespace before the cluster goes; a log that
        cannot be read says why in its file rather than stopping the run's teardown."""
        if self._logs_dir is None:
            self._logs_dir = tempfile.TemporaryDirectory(prefix="vck-volcano-logs-")
        folder = pathlib.Path(self._logs_dir.name)
        # Best effort, whatever goes wrong (a kubeconfig gone, a cluster gone): the run's teardown
        # and its other logs come first.
        try:
            api = kube.client(cluster.kubeconfig, cluster.context)
            core = kubernetes.client.CoreV1Api(api)
            pods = api.sanitize_for_serialization(core.list_namespaced_pod(self.spec.namespace, _request_timeout=30))["items"]
        except Exception as err:  # noqa: BLE001
            (folder / f"{self.spec.namespace}.log").write_text(f"could not list the pods of {self.spec.namespace}: {err}\n")
            return
        for pod in pods:
            pod_name, containers = pod["metadata"]["name"], [c["name"] for c in pod["spec"]["containers"]]
            for container in containers:
                name = pod_name if len(containers) == 1 else f"{pod_name}-{container}"
                try:
                    # Raw bytes: the client would parse a log that happens to be one JSON document
                    # (it still raises ApiException for an answer other than 2xx).
                    raw = cast(urllib3.BaseHTTPResponse, core.read_namespaced_pod_log(pod_name, self.spec.namespace, container=container, _request_timeout=30, _preload_content=False))
                    text = raw.data.decode(errors="replace")
                except Exception as err:  # noqa: BLE001
                    text = f"could not read the log of {pod_name}/{container}: {err}\n"
                (folder / f"{name}.log").write_text(text)

    def ensure(self, cluster: base.ClusterHandle, scheduler_conf: Mapping[str, Any] | None) -> None:
        conf = dict(scheduler_conf or impl_base.DEFAULT_SCHEDULER_CONF)
        key = conf_text(conf)
        if self._installed_on != cluster:
            self._install(cluster, conf)
            self._installed_on = cluster
        elif key != self._conf_key:
            api = kube.client(cluster.kubeconfig, cluster.context)
            apply_conf(api, self.spec, conf)
            wait_scheduler_ready(api, self.spec)
        self._conf_key = key

    def _default_source_name(self) -> str:
        return CHART_FOLDER if self.spec.method == "helm" else MANIFESTS_FILE

    def _source(self) -> str:
        if self.spec.source is not None:
            return self.spec.source
        try:
            return str(volcano_resolve.source_dir(self.spec.tag) / self._default_source_name())
        except errors.ToolchainError as err:
            raise impl_base.ImplementationError(f"{self.name}: {err}") from err

    def _kind_cluster(self, cluster: base.ClusterHandle) -> str | None:
        return self.spec.kind_cluster or (cluster.name if cluster.backend == "kind" else None)

    def _images_for(self, kind_cluster: str | None) -> Images:
        if self._images is None:
            if kind_cluster is None:
                raise impl_base.ImplementationError(
                    f"{self.name}: without images= the kit builds Volcano's images and loads them into a kind cluster; "
                    "this cluster is not one: push the images to a registry it pulls from and give images=REGISTRY/PREFIX"
                )
            self._images = self._build_images(self.spec.tag)
        return self._images

    def _install(self, cluster: base.ClusterHandle, conf: Mapping[str, Any]) -> None:
        if cluster.backend == "embedded":
            raise impl_base.ImplementationError(f"{self.name} runs Volcano's pods, and the embedded cluster has no kubelet: use --backend kind (or existing), or --impl volcano")
        kind_cluster = self._kind_cluster(cluster)
        images = self._images_for(kind_cluster)
        source = self._source()
        if kind_cluster is not None:
            kind_binary = self._kind or toolchain_binary("kind")
            for command in kind_load_commands(images, kind_cluster, kind_binary):
                self._run(command, None)
        kubeconfig, context = str(cluster.kubeconfig), cluster.context
        api = kube.client(cluster.kubeconfig, cluster.context)
        apps = kubernetes.client.AppsV1Api(api)
        if self.spec.method == "helm":
            with tempfile.TemporaryDirectory(prefix="vck-volcano-") as tmp:
                values = pathlib.Path(tmp) / "values.yaml"
                values.write_text(yaml.safe_dump(helm_values(self.spec, images, conf, cluster.node_selector), sort_keys=False))
                self._run(helm_command(self.spec, source, str(values), kubeconfig, context, self._helm or toolchain_binary("helm")), None)
            # The chart has no value for the scheduler's --node-selector nor its strategy.
            live = api.sanitize_for_serialization(apps.read_namespaced_deployment(self.spec.scheduler_deployment, self.spec.namespace))
            if adapt_scheduler(live, cluster.node_selector):
                apps.patch_namespaced_deployment(self.spec.scheduler_deployment, self.spec.namespace, {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}, "template": live["spec"]["template"]}})
        else:
            documents = load_documents(pathlib.Path(source).read_text())
            text = yaml.safe_dump_all(manifests(self.spec, images, documents, conf, cluster.node_selector), sort_keys=False)
            kubectl = self._kubectl or toolchain_binary("kubectl")
            command = [kubectl, "--kubeconfig", kubeconfig, *(["--context", context] if context else []), "apply", "--server-side", "--force-conflicts", "-f", "-"]
            self._run(command, text)
        for component in ("scheduler", "controllers", "admission"):
            wait_rolled_out(apps, self.spec.namespace, f"{self.spec.release}-{component}", ROLLOUT_TIMEOUT_S)
        wait_scheduler_ready(api, self.spec)
        try:
            volcano_webhooks.wait_live(api, READY_TIMEOUT_S, lambda: None)
        except TimeoutError as err:
            raise impl_base.ImplementationError(f"{self.name}: {err}") from err
        # The scheduler creates the default queue and the controller opens it; until then
        # Volcano's webhook refuses Jobs sent to it.
        self._wait_default_queues(cluster)


def _build_images(tag: str) -> Images:
    """The release's images built here (volcano_images), on this machine's Docker engine."""
    try:
        return volcano_images.build(docker.ensure(), tag, progress=_stderr)
    except (errors.ToolchainError, base.ClusterError) as err:
        raise impl_base.ImplementationError(f"volcano {tag}: could not build its images here: {err}") from err


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
