"""`python -m fake_devices.deviceplugin` as a process: serves, registers, and shuts down cleanly."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

from fake_devices.deviceplugin import testing

REPO = pathlib.Path(__file__).resolve().parents[3]


def run_plugin(socket_dir: pathlib.Path, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "fake_devices.deviceplugin", "--socket-dir", str(socket_dir), "--poll-interval", "0.05", *args]
    return subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cli_serves_registers_and_removes_its_socket_on_signal(
    kubelet: testing.StandInKubelet, socket_dir: pathlib.Path, stop_signal: signal.Signals
) -> None:
    process = run_plugin(socket_dir, "--resource", "huawei.com/Ascend910", "--count", "4", "--numa-nodes", "2")
    try:
        registration = kubelet.next_registration(timeout=20)
        assert registration.resource_name == "huawei.com/Ascend910"
        with kubelet.dial(registration) as client:
            listed = client.list_and_watch().next()
            assert [(d.id, d.numa_nodes) for d in listed] == [
                ("Ascend910-0", (0,)),
                ("Ascend910-1", (0,)),
                ("Ascend910-2", (1,)),
                ("Ascend910-3", (1,)),
            ]
            assert client.allocate(["Ascend910-2"]) == [{"ASCEND_VISIBLE_DEVICES": "Ascend910-2"}]
        process.send_signal(stop_signal)
        _, stderr = process.communicate(timeout=20)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, stderr
    assert not (socket_dir / registration.endpoint).exists()
    assert f"received {stop_signal.name}: shutting down" in stderr


def test_cli_exits_1_with_the_kubelets_message_when_rejected(socket_dir: pathlib.Path) -> None:
    with testing.StandInKubelet(socket_dir, supported_versions=("v1",)):
        process = run_plugin(socket_dir)
        _, stderr = process.communicate(timeout=20)
    assert process.returncode == 1
    assert "UNKNOWN: requested API version 'v1beta1' is not supported by kubelet" in stderr
    assert not (socket_dir / "vck-nvidia.com-gpu.sock").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--count", "0"], "error: invalid device set: count: expected an integer >= 1, got 0"),
        (["--resource", "gpu"], "error: invalid device set: resource_name: expected a domain-prefixed extended resource name"),
        (["--socket-dir", "/nonexistent/device-plugins"], "error: /nonexistent/device-plugins: device plugin directory does not exist"),
        (["--endpoint", "kubelet.sock"], "endpoint: expected a socket file name in socket_dir other than kubelet.sock"),
    ],
)
def test_cli_reports_bad_arguments_with_exit_2(socket_dir: pathlib.Path, args: list[str], message: str) -> None:
    process = run_plugin(socket_dir, *args)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 2
    assert message in stderr


def test_cli_serves_a_profile_node_as_the_kit_advertises_it(kubelet: testing.StandInKubelet, socket_dir: pathlib.Path) -> None:
    # frag-half-0 of the `fragmented` profile: 8 A100s, GPUs 1, 2, 5 and 6 unhealthy (taken outside
    # the scheduler's view), so the kubelet must see the same ids and health the node advertises.
    command = [sys.executable, "-m", "fake_devices.deviceplugin", "--socket-dir", str(socket_dir), "--poll-interval", "0.05", "--profile", "fragmented"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "NODE_NAME": "frag-half-0"})
    try:
        registration = kubelet.next_registration(timeout=20)
        assert registration.resource_name == "nvidia.com/gpu"
        with kubelet.dial(registration) as client:
            listed = client.list_and_watch().next()
            assert [d.id for d in listed] == [f"GPU-{i}" for i in range(8)]
            assert [d.id for d in listed if d.health != "Healthy"] == ["GPU-1", "GPU-2", "GPU-5", "GPU-6"]
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=20)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "supernodes-4x8", "--node", "gpu-server-0"], "error: profile supernodes-4x8 has no node 'gpu-server-0'; its nodes: snode-0, snode-1"),
        (["--profile", "supernodes-4x8"], "error: --profile supernodes-4x8 needs --node (or NODE_NAME): one of snode-0"),
        (["--profile", "fragmented", "--node", "frag-cpu-0"], "error: node frag-cpu-0 has no GPUs in its profile"),
        (["--profile", "no-such-profile"], "cannot read"),
    ],
)
def test_cli_profile_mistakes_exit_2(socket_dir: pathlib.Path, args: list[str], message: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NODE_NAME"}
    command = [sys.executable, "-m", "fake_devices.deviceplugin", "--socket-dir", str(socket_dir), *args]
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert message in proc.stderr, proc.stderr
