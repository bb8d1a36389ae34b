"""The kind backend's parts that need no Docker: the cluster config, the static pod network, the
engine's CAP_SYS_RESOURCE detection and runc wrapper, the device plugin's DaemonSet, and the
errors that say what to do. The backend itself runs a real kind cluster in tests/conformance/cluster/test_kind.py."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

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
from conformance.toolchain import errors


def test_config_puts_the_control_plane_first_then_the_real_workers() -> None:
    config = kind.config_for(2, "img:1")
    assert config["apiVersion"] == "kind.x-k8s.io/v1alpha4" and config["kind"] == "Cluster"
    assert [(n["role"], n["image"]) for n in config["nodes"]] == [("control-plane", "img:1"), ("worker", "img:1"), ("worker", "img:1")]
    assert "networking" not in config
    assert kind.config_for(0, "img:1", static_cni=True)["networking"] == {"disableDefaultCNI": True}


def test_worker_names_follow_kind() -> None:
    assert kind.worker_names("c", 3) == ["c-worker", "c-worker2", "c-worker3"]
    assert kind.worker_names("c", 0) == []


def test_the_static_pod_network_gives_addresses_from_the_node_cidr() -> None:
    conflist = kind.cni_conflist("10.244.3.0/24")
    ptp = conflist["plugins"][0]
    assert ptp["type"] == "ptp" and ptp["ipam"]["type"] == "host-local"
    assert ptp["ipam"]["ranges"] == [[{"subnet": "10.244.3.0/24"}]]


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
        kind_image.ensure(docker.Engine(str(stand_in)), "mine:1", progress=lambda _: None, buildable=False)
    assert "pull access denied for mine" in str(err.value) and "the kit builds only its own" in str(err.value)
    assert calls.read_text().splitlines() == ["image inspect mine:1", "pull mine:1"]
    # `--kind-image` reaches the backend; without it, the kit's own image, which it may build.
    assert registry.backend("kind", kind_image="mine:1").node_image == "mine:1"
    assert registry.backend("kind").node_image == kind.NODE_IMAGE
    # --kube-version: kind's published image of that release (pulled; only the kit's is built here).
    assert registry.backend("kind", kube_version="v1.35.3").node_image == "kindest/node:v1.35.3"
