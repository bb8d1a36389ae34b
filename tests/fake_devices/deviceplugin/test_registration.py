"""Registration over the kubelet's life: late kubelets, restarted kubelets, rejecting kubelets."""

from __future__ import annotations

import pathlib

import grpc
import pytest

from fake_devices.deviceplugin import devices, registration, testing
from tests.fake_devices.deviceplugin.plugin_harness import StartPlugin


def test_kubelet_restart_makes_the_plugin_serve_and_register_again(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet, socket_dir: pathlib.Path
) -> None:
    device_plugin = start_plugin(gpus)
    first = kubelet.next_registration()
    with kubelet.dial(first) as client:
        old_stream = client.list_and_watch()
        old_stream.next()
        device_plugin.set_health("GPU-3", False)
        old_stream.next()
        kubelet.restart()  # sweeps the plugin's socket, as the kubelet does on start
        again = kubelet.next_registration()
        assert old_stream.ended() == grpc.StatusCode.OK
    assert again == first
    assert (socket_dir / again.endpoint).is_socket()
    with kubelet.dial(again) as client:
        listed = client.list_and_watch().next()
    # Health is the plugin's state, not the connection's: it survives the restart.
    assert [d.id for d in listed if d.health == "Unhealthy"] == ["GPU-3"]


def test_a_recreated_kubelet_socket_alone_triggers_registration(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet, socket_dir: pathlib.Path
) -> None:
    start_plugin(gpus)
    first = kubelet.next_registration()
    for _ in range(3):
        kubelet.restart(sweep=False)  # only kubelet.sock is deleted and created anew
        assert kubelet.next_registration() == first
    with kubelet.dial(first) as client:
        assert len(client.list_and_watch().next()) == 8


def test_plugin_started_before_the_kubelet_registers_when_it_appears(
    start_plugin: StartPlugin, gpus: devices.DeviceSet, socket_dir: pathlib.Path
) -> None:
    device_plugin = start_plugin(gpus)
    assert device_plugin.server.serving
    with testing.StandInKubelet(socket_dir) as kubelet:
        registered = kubelet.next_registration()
        assert registered.resource_name == "nvidia.com/gpu"
        with kubelet.dial(registered) as client:
            assert client.options().get_preferred_allocation_available


def test_rejected_registration_fails_start_with_the_kubelets_message(
    socket_dir: pathlib.Path, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    with testing.StandInKubelet(socket_dir, supported_versions=("v1",)) as kubelet:
        with pytest.raises(registration.RegistrationError) as raised:
            start_plugin(gpus)
        assert kubelet.next_registration().version == "v1beta1"
    assert raised.value.retryable is False
    assert str(raised.value) == (
        f"{socket_dir / 'kubelet.sock'}: Register of nvidia.com/gpu (endpoint vck-nvidia.com-gpu.sock, version v1beta1) failed: "
        "UNKNOWN: requested API version 'v1beta1' is not supported by kubelet. Supported versions are ['v1']"
    )
    # A plugin that failed to start leaves no socket behind.
    assert not (socket_dir / "vck-nvidia.com-gpu.sock").exists()


def test_rejection_after_a_kubelet_restart_stops_the_plugin(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    device_plugin = start_plugin(gpus)
    kubelet.next_registration()
    kubelet.supported_versions = ("v2",)
    kubelet.restart()
    assert device_plugin.failed.wait(timeout=5), "the plugin did not notice the rejecting kubelet"
    assert device_plugin.failure is not None
    assert "is not supported by kubelet" in str(device_plugin.failure)


def test_file_identity_tells_a_replaced_file_from_the_same_one(socket_dir: pathlib.Path) -> None:
    path = socket_dir / "kubelet.sock"
    assert registration.FileIdentity.of(path) is None
    path.write_text("")
    first = registration.FileIdentity.of(path)
    assert first is not None and registration.FileIdentity.of(path) == first
    replacement = socket_dir / "new"
    replacement.write_text("")
    replacement.rename(path)  # a new inode at the same path
    assert registration.FileIdentity.of(path) not in (None, first)
