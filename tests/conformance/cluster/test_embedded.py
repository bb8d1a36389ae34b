"""The embedded backend on the real binaries: up, reuse, status, down, Ctrl-C, and what runs in it."""

from __future__ import annotations

import os
import pathlib
import select
import signal
import subprocess
import sys
import time

import kubernetes
import pytest

from conformance.cluster import base, embedded, kube, nodes, processes
from conformance.toolchain import cache, install

pytestmark = pytest.mark.cluster
CLI = [sys.executable, "-m", "conformance.cli"]


def _cli(args: list[str], state: pathlib.Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VCK_STATE_DIR": str(state)}
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_cli_up_status_reuse_down(tmp_path: pathlib.Path) -> None:
    state = tmp_path / "state"
    up = _cli(["cluster", "up", "--name", "vck-cli", "--nodes", "2:cpu=8,memory=16Gi;1:nvidia.com/gpu=8,label:gpu=yes,taint:gpu=true:NoSchedule"], state)
    assert up.returncode == 0, up.stderr
    kubeconfig = next(line.split("=", 1)[1] for line in up.stdout.splitlines() if line.startswith("export KUBECONFIG="))
    assert pathlib.Path(kubeconfig).is_file()
    try:
        core = kubernetes.client.CoreV1Api(kube.client(pathlib.Path(kubeconfig)))
        listed = {n.metadata.name: n for n in core.list_node().items}
        assert sorted(listed) == ["vck-node-0", "vck-node-1", "vck-node-2"]
        assert all(kube.node_ready(core.api_client.sanitize_for_serialization(n)) for n in listed.values())
        gpu = listed["vck-node-2"]
        assert gpu.status.allocatable["nvidia.com/gpu"] == "8" and gpu.metadata.labels["gpu"] == "yes"
        assert [(t.key, t.effect) for t in gpu.spec.taints] == [("gpu", "NoSchedule")]
        assert listed["vck-node-0"].status.allocatable["cpu"] == "8"

        running = {p.name for p in processes.under(state / "vck-cli")}
        assert {"etcd", "kube-apiserver", "kube-controller-manager"} <= running
        assert any(name.startswith("kwok") for name in running)
        assert "kube-scheduler" not in running, "the implementation under test schedules, not kube-scheduler"

        status = _cli(["cluster", "status", "--name", "vck-cli"], state)
        assert status.returncode == 0 and "running" in status.stdout and "resident memory" in status.stdout

        again = _cli(["cluster", "up", "--name", "vck-cli", "--nodes", "2:cpu=8,memory=16Gi"], state)
        assert again.returncode == 0 and "(reused)" in again.stdout
        assert "already running; reusing it" in again.stderr
    finally:
        down = _cli(["cluster", "down", "--name", "vck-cli"], state)
    assert down.returncode == 0, down.stderr
    assert processes.under(state / "vck-cli") == []
    assert not (state / "vck-cli").exists()
    after = _cli(["cluster", "status", "--name", "vck-cli"], state)
    assert after.returncode == 1 and "not running" in after.stdout


def test_clusters_started_at_once_do_not_collide(tmp_path: pathlib.Path) -> None:
    """Parallel workers start clusters at the same moment: each must get its own ports."""
    import concurrent.futures

    backend = embedded.EmbeddedBackend(state_root=tmp_path, progress=lambda _: None)
    names = [f"par-{i}" for i in range(3)]
    try:
        with concurrent.futures.ThreadPoolExecutor(len(names)) as pool:
            handles = list(pool.map(lambda n: backend.up(n, nodes.parse("1")), names))
        assert len({h.kubeconfig.read_text() for h in handles}) == 3
        for handle in handles:
            kube.wait_ready(kube.client(handle.kubeconfig), 10)
    finally:
        for name in names:
            backend.down(name)
    assert processes.under(tmp_path) == []


def test_an_unhealthy_cluster_of_the_same_name_is_refused_clearly(tmp_path: pathlib.Path) -> None:
    backend = embedded.EmbeddedBackend(state_root=tmp_path, progress=lambda _: None)
    (tmp_path / "stale").mkdir()
    with pytest.raises(base.ClusterError) as err:
        backend.up("stale", nodes.parse("1"))
    assert "exists" in str(err.value) and "vck cluster down --name stale" in str(err.value)


def test_bad_cluster_name_is_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(base.ClusterError, match="DNS-1123"):
        embedded.EmbeddedBackend(state_root=tmp_path).up("Not_A_Name", nodes.parse("1"))


def _held_toolchain(root: pathlib.Path, held: str) -> tuple[pathlib.Path, pathlib.Path]:
    """A cache whose `held` component is a script that says it started, through a FIFO, and then
    blocks until killed; the other components are the real cached ones. Returns the cache folder
    and the FIFO to read: once it speaks, `up` is certainly still waiting on that component."""
    real = install.install()
    root.mkdir(parents=True)
    started, hold = root / "started.fifo", root / "hold.fifo"
    os.mkfifo(started)
    os.mkfifo(hold)
    for name, resolved in real.items():
        folder = cache.bin_dir(resolved.component, root)
        folder.mkdir(parents=True)
        (folder / "SOURCE").write_text("held for a test\n")
        if name == held:
            # The shell itself blocks (opening a FIFO nobody writes), so the process keeps the
            # cluster's flags on its command line and `down` finds it as it would the real one.
            script = folder / name
            # kwokctl asks each binary its version first: that it answers for real.
            script.write_text(f'#!/bin/sh\ncase "$1" in --version|version) exec {resolved.path} "$@";; esac\necho started > {started}\nread _ < {hold}\n')
            script.chmod(0o755)
        else:
            (folder / name).symlink_to(resolved.path)
    return root, started


def _wait_for_word(fifo: pathlib.Path, proc: subprocess.Popen[str], timeout_s: float = 300) -> None:
    """Block until the held component writes to the FIFO; fail at once if `vck` exits first.
    Opened read-write so the open never blocks and the read end never sees end-of-file."""
    fd = os.open(fifo, os.O_RDWR)
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:
                assert os.read(fd, 64).strip() == b"started"
                return
            assert proc.poll() is None, f"vck exited ({proc.returncode}) before the held component started: {proc.communicate()}"
        raise AssertionError(f"the held component did not start within {timeout_s}s")
    finally:
        os.close(fd)


@pytest.mark.parametrize("interrupt_when", ["kwokctl", "kube-apiserver", "kube-controller-manager"])
def test_ctrl_c_during_up_leaves_nothing_behind(tmp_path: pathlib.Path, interrupt_when: str) -> None:
    state = tmp_path / "state"
    root, started = _held_toolchain(tmp_path / "cache", interrupt_when)
    env = {**os.environ, "VCK_STATE_DIR": str(state), "VCK_CACHE_DIR": str(root)}
    proc = subprocess.Popen([*CLI, "cluster", "up", "--name", "vck-int"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        _wait_for_word(started, proc)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        left = processes.under(state)
        processes.stop(left)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
    assert left == []
    assert not (state / "vck-int").exists()


def test_controller_manager_collects_garbage_and_deletes_namespaces(vck_api: kubernetes.client.ApiClient) -> None:
    core = kubernetes.client.CoreV1Api(vck_api)
    ns = f"gc-{os.getpid()}"
    core.create_namespace({"metadata": {"name": ns}})
    owner = core.create_namespaced_config_map(ns, {"metadata": {"name": "owner"}})
    core.create_namespaced_config_map(ns, {"metadata": {"name": "dependent", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}]}})
    core.delete_namespaced_config_map("owner", ns)
    kube.watch_until(core.list_namespaced_config_map, lambda s: "dependent" not in s, 60, "garbage collection of the dependent", namespace=ns)
    core.delete_namespace(ns)
    kube.watch_until(core.list_namespace, lambda s: ns not in s, 60, f"namespace {ns} to be deleted")


def test_nothing_schedules_an_unbound_pod(vck_api: kubernetes.client.ApiClient, vck_namespace: str) -> None:
    """With kube-scheduler off, a pod waits for the implementation under test; a bound one runs."""
    core = kubernetes.client.CoreV1Api(vck_api)
    node = core.list_node().items[0].metadata.name
    core.create_namespaced_pod(vck_namespace, {"metadata": {"name": "unbound"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    core.create_namespaced_pod(vck_namespace, {"metadata": {"name": "bound"}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}})
    kube.wait_pod(vck_api, vck_namespace, "bound", kube.phase_is("Running"), 60, "to run")
    unbound = core.read_namespaced_pod("unbound", vck_namespace)
    assert unbound.spec.node_name is None and unbound.status.phase == "Pending"
