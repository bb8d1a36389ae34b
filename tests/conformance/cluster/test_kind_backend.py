"""The kind backend's parts that need no Docker: the cluster config, the static pod network, the
engine's CAP_SYS_RESOURCE detection and runc wrapper, the device plugin's DaemonSet, and the
errors that say what to do. The backend itself runs a real kind cluster in tests/conformance/cluster/test_kind.py."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest
import yaml

from conformance import api
from conformance.cluster import (
    base,
    docker,
    embedded,
    kind,
    kind_image,
    kind_workloads,
    nodes,
    owners,
    registry,
)
from conformance.toolchain import errors, versions


def test_config_puts_the_control_plane_first_then_the_real_workers() -> None:
    config = kind.config_for(2, "img:1")
    assert config["apiVersion"] == "kind.x-k8s.io/v1alpha4" and config["kind"] == "Cluster"
    assert [(n["role"], n["image"]) for n in config["nodes"]] == [("control-plane", "img:1"), ("worker", "img:1"), ("worker", "img:1")]
    assert "networking" not in config
    assert kind.config_for(0, "img:1", static_cni=True)["networking"] == {"disableDefaultCNI": True, "podSubnet": kind.POD_SUBNET}
    # On a cgroup v1 host the kubelet is told it may run there (v1.35 refuses by default).
    assert "kubeadmConfigPatches" not in config
    patches = kind.config_for(0, "img:1", cgroup_v1=True)["kubeadmConfigPatches"]
    assert [yaml.safe_load(p) for p in patches] == [{"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1", "failCgroupV1": False}]


def test_an_images_name_is_the_one_containerd_lists() -> None:
    assert kind.containerd_ref("vck-workload-mpi:abc") == "docker.io/library/vck-workload-mpi:abc"
    assert kind.containerd_ref("rayproject/ray:2.52.1") == "docker.io/rayproject/ray:2.52.1"
    assert kind.containerd_ref("registry.example:5000/x/y:1") == "registry.example:5000/x/y:1"
    assert kind.containerd_ref("localhost/x:1") == "localhost/x:1"


def test_worker_names_follow_kind() -> None:
    assert kind.worker_names("c", 3) == ["c-worker", "c-worker2", "c-worker3"]
    assert kind.worker_names("c", 0) == []


def test_the_static_pod_network_gives_addresses_from_the_node_cidr() -> None:
    conflist = kind.cni_conflist("10.244.3.0/24")
    ptp = conflist["plugins"][0]
    assert ptp["type"] == "ptp" and ptp["ipam"]["type"] == "host-local"
    assert ptp["ipam"]["ranges"] == [[{"subnet": "10.244.3.0/24"}]]
    # Pod to pod keeps its addresses on every node; only traffic leaving the pod network is NATed.
    assert ptp["ipMasq"] is False
    assert kind.masquerade_rule("10.244.3.0/24") == ["-s", "10.244.3.0/24", "!", "-d", "10.244.0.0/16", "-j", "MASQUERADE"]


def _status(tmp_path: pathlib.Path, bounding: int) -> pathlib.Path:
    path = tmp_path / "status"
    path.write_text(f"Name:\tpython\nCapEff:\t0000000000000000\nCapBnd:\t{bounding:016x}\n")
    return path


def test_a_missing_cap_sys_resource_is_detected_not_assumed(tmp_path: pathlib.Path) -> None:
    full = (1 << 41) - 1
    assert docker.bounding_set_has(docker.CAP_SYS_RESOURCE, _status(tmp_path, full))
    assert not docker.bounding_set_has(docker.CAP_SYS_RESOURCE, _status(tmp_path, full & ~(1 << docker.CAP_SYS_RESOURCE)))
    # Unreadable: assume the capability is there (no wrapper), as on an ordinary machine.
    assert docker.bounding_set_has(docker.CAP_SYS_RESOURCE, tmp_path / "absent")


def test_the_engine_config_has_no_wrapper_where_none_is_needed(tmp_path: pathlib.Path) -> None:
    assert docker.daemon_config(tmp_path, need_wrapper=False, real_runc="/usr/sbin/runc") == {}
    with pytest.raises(docker.DockerUnavailable, match="no `runc`"):
        docker.daemon_config(tmp_path, need_wrapper=True, real_runc=None)


def test_the_runc_wrapper_takes_cap_sys_resource_out_of_the_spec_and_runs_runc(tmp_path: pathlib.Path) -> None:
    # A stand-in for runc that reports the arguments it got and the capabilities it was handed.
    fake_runc = tmp_path / "runc"
    fake_runc.write_text(
        f"#!{sys.executable}\nimport json, sys\nargs = sys.argv[1:]\n"
        "spec = json.load(open(args[args.index('--bundle') + 1] + '/config.json'))\n"
        "print(json.dumps({'args': args, 'caps': spec['process']['capabilities']}))\n"
    )
    fake_runc.chmod(0o755)
    config = docker.daemon_config(tmp_path, need_wrapper=True, real_runc=str(fake_runc))
    assert config["default-runtime"] == docker.WRAPPED_RUNTIME
    wrapper = pathlib.Path(config["runtimes"][docker.WRAPPED_RUNTIME]["path"])  # type: ignore[index]
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    caps = ["CAP_CHOWN", "CAP_SYS_RESOURCE", "CAP_SYS_ADMIN"]
    (bundle / "config.json").write_text(json.dumps({"process": {"capabilities": {"bounding": caps, "effective": caps, "ambient": []}}}))
    out = subprocess.run([str(wrapper), "create", "--bundle", str(bundle), "ctr-1"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["args"] == ["create", "--bundle", str(bundle), "ctr-1"]
    assert seen["caps"] == {"bounding": ["CAP_CHOWN", "CAP_SYS_ADMIN"], "effective": ["CAP_CHOWN", "CAP_SYS_ADMIN"], "ambient": []}


def test_without_docker_the_error_says_what_to_install(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(docker.DockerUnavailable) as err:
        docker.ensure(progress=lambda _: None)
    assert "apt-get install docker.io" in str(err.value) and "embedded backend" in str(err.value)


def test_the_device_plugin_runs_only_on_real_nodes() -> None:
    manifest = kind_workloads.daemonset("vck-fake-device-plugin:abc")
    spec = manifest["spec"]["template"]["spec"]
    assert spec["containers"][0]["image"] == "vck-fake-device-plugin:abc"
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": nodes.KIT_NODE_LABEL[0], "operator": "NotIn", "values": [nodes.KIT_NODE_LABEL[1]]}]}]


def test_list_shows_the_kind_clusters_the_kit_created_and_whose_owner_is_gone(tmp_path: pathlib.Path) -> None:
    """A kind cluster's state folder (its kubeconfig, the owner recorded at creation) is what
    `vck cluster list` reads: no Docker needed. The kind backend's folder is not an embedded
    cluster, and no embedded cluster may take its name."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead = owners.Owner(int(gone.stdout), 1, "vck run --backend kind")
    mine = owners.current()
    for name, owner in (("vck-killed", dead), ("vck-running", mine)):
        state = tmp_path / "kind" / name
        state.mkdir(parents=True)
        owners.record(state, owner)
    (tmp_path / "kind" / "vck-reused").mkdir()  # a kind cluster the kit found running: no owner
    listed = {i.name: i for i in api.list_clusters(tmp_path)}
    assert set(listed) == {"vck-killed", "vck-running", "vck-reused"}, "the kind folder itself is no cluster"
    assert {i.backend for i in listed.values()} == {"kind"}
    assert (listed["vck-killed"].owner_alive, listed["vck-running"].owner_alive, listed["vck-reused"].owner) == (False, True, None)
    with pytest.raises(base.ClusterError, match=r"'kind' is taken"):
        embedded.EmbeddedBackend(state_root=tmp_path).up("kind", ())


def test_a_users_node_image_is_pulled_or_refused_never_built_here(tmp_path: pathlib.Path) -> None:
    """`--kind-image`: the kit's recipe would put its own Kubernetes under the user's name."""
    calls = tmp_path / "calls"
    stand_in = tmp_path / "docker"
    stand_in.write_text(f'#!/bin/sh\necho "$@" >> {calls}\necho "Error response from daemon: pull access denied for mine" >&2\nexit 1\n')
    stand_in.chmod(0o755)
    with pytest.raises(errors.ToolchainError) as err:
        kind_image.ensure(docker.Engine(str(stand_in)), "mine:1", progress=lambda _: None, kube=None)
    assert "pull access denied for mine" in str(err.value) and "the kit builds only its own" in str(err.value)
    assert calls.read_text().splitlines() == ["image inspect mine:1", "pull mine:1"]
    # `--kind-image` reaches the backend; without it, the kit's own image, which it may build.
    mine = registry.backend("kind", kind_image="mine:1")
    assert (mine.node_image, mine.node_kube) == ("mine:1", None)
    default = registry.backend("kind")
    assert (default.node_image, default.node_kube) == (kind.NODE_IMAGE, versions.KUBERNETES_VERSION)
    # --kube-version: kind's image of that release, pulled or else built here as that release's.
    other = registry.backend("kind", kube_version="v1.35.3")
    assert (other.node_image, other.node_kube) == ("kindest/node:v1.35.3", "v1.35.3")


def test_a_node_image_asks_for_what_its_kubeadm_names() -> None:
    """etcd, CoreDNS and pause come from the release's own kubeadm constants (read from the
    k8s.io/kubernetes module, as the toolchain downloads it), so a v1.34 node gets etcd 3.6."""
    images = kind_image.kubeadm_images(versions.KUBERNETES_VERSION, progress=lambda _: None)
    assert (images.etcd_tag, images.etcd_version, images.coredns, images.pause) == ("3.5.21-0", "v3.5.21", "v1.12.0", "3.10")
    refs = kind_image.control_plane_images(images)
    assert "registry.k8s.io/etcd:3.5.21-0" in refs and f"registry.k8s.io/kube-proxy:{versions.KUBERNETES_VERSION}" in refs
    later = kind_image.parse_kubeadm_constants("v1.34.1", '\tDefaultEtcdVersion = "3.6.4-0"\n\tCoreDNSVersion = "v1.12.1"\n\tPauseVersion = "3.10.1"\n', "constants.go")
    assert later.etcd_version == "v3.6.4"
    assert kind_image.control_plane_images(later)["registry.k8s.io/etcd:3.6.4-0"] == ("etcd", "/usr/local/bin/etcd")
    # The node's parts: kubeadm and kubelet of that release, CoreDNS and etcd as its kubeadm names.
    parts = {c.name: c.version for c in (*versions.kind_components(later.kube, later.coredns), versions.etcd_component(later.etcd_version))}
    assert (parts["kubeadm"], parts["kubelet"], parts["coredns"], parts["etcd"]) == ("v1.34.1", "v1.34.1", "v1.12.1", "v3.6.4")
    # containerd's sandbox image is the one kind's configuration pins; the image carries pause
    # under that name too (kind v0.29: 3.10, where kubeadm v1.34 asks for 3.10.1).
    assert kind_image.sandbox_image(lambda _: None).startswith("registry.k8s.io/pause:")
    with pytest.raises(errors.ToolchainError, match="PauseVersion"):
        kind_image.parse_kubeadm_constants("v9.9.9", 'DefaultEtcdVersion = "1-0"\nCoreDNSVersion = "v1"\n', "constants.go")


def test_vck_kind_image_never_builds_one_release_under_anothers_tag() -> None:
    """The tag and the release settle each other: a tag naming a release builds that release;
    a tag and a --kube-version that disagree are refused before anything is built."""
    from_tag = api.KindImageConfig(image="kindest/node:v1.34.1")
    from_tag.resolve()
    assert (from_tag.image, from_tag.kube_version) == ("kindest/node:v1.34.1", "v1.34.1")
    from_minor = api.KindImageConfig(kube_version="1.35")
    from_minor.resolve()
    assert (from_minor.image, from_minor.kube_version) == ("kindest/node:v1.35.3", "v1.35.3")
    default = api.KindImageConfig()
    default.resolve()
    assert (default.image, default.kube_version) == (versions.KIND_NODE_IMAGE, versions.KUBERNETES_VERSION)
    with pytest.raises(ValueError, match="names v1.34.1, --kube-version v1.33.2"):
        api.KindImageConfig(image="kindest/node:v1.34.1", kube_version="1.33").resolve()
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "kind", "image", "--kube-version", "1.99"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "vck kind image: --kube-version '1.99'" in proc.stderr, proc.stderr
