"""`python -m fake_devices.deviceplugin` as a process: serves, registers, and shuts down cleanly."""

from __future__ import annotations

import pathlib
import signal
import subprocess
import sys

import pytest

from fake_devices.deviceplugin import testing

REPO = pathlib.Path(__file__).resolve().parents[2]


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
