"""The fake device plugin on kind's real workers: its image, built here, and its DaemonSet.

The repository's Dockerfile (fake_devices/deviceplugin/deploy/) starts from `python:3.11-slim`,
which needs a registry. The kit builds the same image without one: Debian's python3 (mmdebstrap,
as for the node image), the kit's own pinned grpcio, protobuf, PyYAML and jsonschema (the
versions this environment runs, installed by pip into the image's site-packages) and
`fake_devices/`. It is loaded into the cluster's nodes with `kind load docker-image` and run as
the repository's DaemonSet, kept to real nodes (kwok nodes have no kubelet to register with).
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Callable

import kubernetes
import yaml

from conformance import data
from conformance.cluster import base, docker, kind_image, kube, nodes, resources

Progress = Callable[[str], None]
FAKE_DEVICES = data.fake_devices()
DAEMONSET = FAKE_DEVICES / "deviceplugin" / "deploy" / "daemonset.yaml"
IMAGE_NAME = "vck-fake-device-plugin"
PACKAGES = ("grpcio", "protobuf", "PyYAML", "jsonschema")
READY_TIMEOUT_S = 180.0
DOCKERFILE = """\
FROM {base}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY site/ /usr/local/lib/python3.11/dist-packages/
COPY fake_devices/ /opt/vck/fake_devices/
WORKDIR /opt/vck
ENTRYPOINT ["python3", "-m", "fake_devices.deviceplugin"]
"""


def pins() -> list[str]:
    """The packages the plugin needs, at the versions this environment runs (pyproject's pins)."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in PACKAGES]


def _sources_digest() -> str:
    digest = hashlib.sha256(repr((pins(), DOCKERFILE)).encode())
    for path in sorted(FAKE_DEVICES.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(FAKE_DEVICES)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def device_plugin_image(engine: docker.Engine, progress: Progress) -> str:
    """The plugin's image, tagged by what it is made of (so a changed plugin is rebuilt)."""
    tag = f"{IMAGE_NAME}:{_sources_digest()}"
    if engine.has_image(tag):
        return tag
    python = kind_image.rootfs(engine, "vck/kind-python-rootfs", ("python3", "ca-certificates"), progress)
    progress(f"kind: image {tag} (the fake device plugin)")
    with tempfile.TemporaryDirectory(prefix="vck-device-plugin-") as tmp:
        context = pathlib.Path(tmp)
        installed = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target", str(context / "site"), *pins()],
            capture_output=True, text=True,
        )
        if installed.returncode != 0:
            raise base.ClusterError(f"pip could not install {', '.join(pins())} for the device plugin's image:\n{installed.stderr[-1500:]}")
        shutil.copytree(FAKE_DEVICES, context / "fake_devices", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (context / "Dockerfile").write_text(DOCKERFILE.format(base=python))
        engine.run(["build", "-q", "-t", tag, str(context)], timeout=1800)
    return tag


def daemonset(image: str) -> dict[str, Any]:
    """The repository's DaemonSet with this image, kept off the kit's kwok nodes."""
    manifest: dict[str, Any] = copy.deepcopy(yaml.safe_load(DAEMONSET.read_text()))
    spec = manifest["spec"]["template"]["spec"]
    spec["containers"][0]["image"] = image
    key, value = nodes.KIT_NODE_LABEL
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "NotIn", "values": [value]}]}]}}}
    return manifest


def deploy_device_plugin(handle: base.ClusterHandle, kind_binary: str, engine: docker.Engine, workers: list[str], progress: Progress) -> str:
    """Load the image into the cluster, run the DaemonSet, and wait until every named worker
    advertises the plugin's devices. Returns the image."""
    image = device_plugin_image(engine, progress)
    loaded = subprocess.run([kind_binary, "load", "docker-image", image, "--name", handle.name], capture_output=True, text=True, timeout=600)
    if loaded.returncode != 0:
        raise base.ClusterError(f"kind load docker-image {image} failed:\n{loaded.stderr[-1500:]}")
    api = kube.client(handle.kubeconfig, handle.context)
    manifest = daemonset(image)
    apps = kubernetes.client.AppsV1Api(api)
    try:
        apps.create_namespaced_daemon_set(manifest["metadata"]["namespace"], resources.as_model(manifest))
    except kubernetes.client.ApiException as err:
        if err.status != 409:
            raise
        apps.replace_namespaced_daemon_set(manifest["metadata"]["name"], manifest["metadata"]["namespace"], resources.as_model(manifest))
    resource = manifest["spec"]["template"]["spec"]["containers"][0]["args"][1]
    core = kubernetes.client.CoreV1Api(api)
    wanted = set(workers)
    kube.watch_until(
        core.list_node,
        lambda state: all(int((state.get(n, {}).get("status", {}).get("allocatable") or {}).get(resource, "0")) > 0 for n in wanted),
        READY_TIMEOUT_S,
        f"{', '.join(sorted(wanted))} to advertise {resource} from the fake device plugin",
    )
    return image
