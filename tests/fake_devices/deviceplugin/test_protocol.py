"""The plugin against a stand-in kubelet over real gRPC: what the kubelet sends and gets back.

Each test registers a plugin with the stand-in kubelet, dials it back on the endpoint it
registered, and checks one part of the v1beta1 protocol.
"""

from __future__ import annotations

import pathlib

import grpc
import pytest

from fake_devices.deviceplugin import devices, testing
from tests.fake_devices.deviceplugin.plugin_harness import StartPlugin

ALL_GPUS = [f"GPU-{i}" for i in range(8)]


def test_registration_sends_version_endpoint_resource_and_options(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet, socket_dir: pathlib.Path
) -> None:
    start_plugin(gpus)
    registration = kubelet.next_registration()
    assert registration == testing.Registration(
        version="v1beta1",
        endpoint="vck-nvidia.com-gpu.sock",
        resource_name="nvidia.com/gpu",
        pre_start_required=False,
        get_preferred_allocation_available=True,
    )
    # The endpoint is a socket file in the kubelet's directory, where the kubelet dials it.
    assert (socket_dir / registration.endpoint).is_socket()
    with kubelet.dial(registration) as client:
        options = client.options()
    assert options.get_preferred_allocation_available is True
    assert options.pre_start_required is False


def test_endpoint_can_be_named(kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet) -> None:
    start_plugin(gpus, endpoint="gpu.sock")
    assert kubelet.next_registration().endpoint == "gpu.sock"


def test_list_and_watch_sends_every_device_with_its_numa_node(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client:
        listed = client.list_and_watch().next()
    assert listed == tuple(testing.ListedDevice(id=f"GPU-{i}", health="Healthy", numa_nodes=(i // 4,)) for i in range(8))


def test_health_flip_sends_a_new_list(kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet) -> None:
    device_plugin = start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client:
        stream = client.list_and_watch()
        assert {d.health for d in stream.next()} == {"Healthy"}
        assert device_plugin.set_health("GPU-5", False) is True
        unhealthy = stream.next()
        assert [d.id for d in unhealthy if d.health == "Unhealthy"] == ["GPU-5"]
        assert len(unhealthy) == 8  # the whole list again, not a delta
        assert device_plugin.set_health("GPU-5", False) is False  # no change, no message
        device_plugin.set_health("GPU-5", True)
        assert {d.health for d in stream.next()} == {"Healthy"}


def test_health_flip_reaches_every_open_stream(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    device_plugin = start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client:
        streams = [client.list_and_watch() for _ in range(3)]
        for stream in streams:
            stream.next()
        device_plugin.set_health("GPU-0", False)
        for stream in streams:
            assert stream.next()[0] == testing.ListedDevice(id="GPU-0", health="Unhealthy", numa_nodes=(0,))


def test_health_file_flips_listed_devices(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet, socket_dir: pathlib.Path
) -> None:
    health_file = socket_dir / "unhealthy"
    health_file.write_text("GPU-2  # ECC errors\n")
    start_plugin(gpus, health_file=health_file)
    with kubelet.dial(kubelet.next_registration()) as client:
        stream = client.list_and_watch()
        assert [d.id for d in stream.next() if d.health == "Unhealthy"] == ["GPU-2"]
        with health_file.open("a") as appending:  # one write: the poll never sees half of it
            appending.write("GPU-7\nGPU-99\n")  # an unknown id is logged and ignored
        assert [d.id for d in stream.next() if d.health == "Unhealthy"] == ["GPU-2", "GPU-7"]
        replacement = socket_dir / "unhealthy.new"
        replacement.write_text("GPU-7\n")
        replacement.replace(health_file)  # atomic: GPU-2 healthy again, GPU-7 still not
        assert [d.id for d in stream.next() if d.health == "Unhealthy"] == ["GPU-7"]
        health_file.unlink()
        assert {d.health for d in stream.next()} == {"Healthy"}


def test_unknown_device_health_is_refused(start_plugin: StartPlugin, gpus: devices.DeviceSet) -> None:
    device_plugin = start_plugin(gpus)
    with pytest.raises(KeyError, match=r"unknown device ids \['GPU-8'\] of nvidia.com/gpu"):
        device_plugin.set_health("GPU-8", False)


def test_preferred_allocation_keeps_to_one_numa_node(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client:
        # Node 0 has one free GPU, node 1 three: a pair fits only on node 1.
        assert client.preferred_allocation(["GPU-0", "GPU-4", "GPU-6", "GPU-7"], size=2) == ["GPU-4", "GPU-6"]
        assert client.preferred_allocation(ALL_GPUS, size=4) == ["GPU-0", "GPU-1", "GPU-2", "GPU-3"]


def test_preferred_allocation_honors_must_include(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client:
        chosen = client.preferred_allocation(ALL_GPUS, size=3, must_include=["GPU-6"])
    assert chosen == ["GPU-6", "GPU-4", "GPU-5"]  # the must-include device's NUMA node, not node 0


def test_preferred_allocation_of_a_bad_request_fails_clearly(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client, pytest.raises(grpc.RpcError) as raised:
        client.preferred_allocation(["GPU-0", "GPU-1"], size=3)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details() == (
        "GetPreferredAllocation: container_requests[0]: allocation_size 3 is larger than the 2 available devices"
    )


@pytest.mark.parametrize(
    ("resource", "env"),
    [
        ("nvidia.com/gpu", "NVIDIA_VISIBLE_DEVICES"),
        ("huawei.com/Ascend910", "ASCEND_VISIBLE_DEVICES"),
        ("metax-tech.com/gpu", "METAX_VISIBLE_DEVICES"),
    ],
)
def test_allocate_returns_the_vendors_visible_devices_variable(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, resource: str, env: str
) -> None:
    device_set = devices.synthetic(resource, count=4, numa_nodes=2, prefix="dev")
    start_plugin(device_set)
    registration = kubelet.next_registration()
    assert registration.resource_name == resource
    with kubelet.dial(registration) as client:
        envs = client.allocate(["dev-3", "dev-1"], ["dev-0"])
    assert envs == [{env: "dev-3,dev-1"}, {env: "dev-0"}]


def test_allocate_variable_can_be_overridden(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    start_plugin(gpus, visible_devices_env="CUDA_VISIBLE_DEVICES")
    with kubelet.dial(kubelet.next_registration()) as client:
        assert client.allocate(["GPU-1"]) == [{"CUDA_VISIBLE_DEVICES": "GPU-1"}]


def test_allocate_of_an_unknown_device_fails_with_invalid_argument(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet
) -> None:
    start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client, pytest.raises(grpc.RpcError) as raised:
        client.allocate(["GPU-1"], ["GPU-2", "GPU-42"])
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.details() == (
        "Allocate: container_requests[1]: unknown device ids ['GPU-42'] for nvidia.com/gpu; "
        f"expected ids this plugin advertises: {ALL_GPUS}"
    )


def test_pre_start_container_is_answered(kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet) -> None:
    start_plugin(gpus)
    with kubelet.dial(kubelet.next_registration()) as client:
        client.pre_start_container(["GPU-0"])  # raises grpc.RpcError (UNIMPLEMENTED) if not served


def test_stop_ends_the_stream_and_removes_the_socket(
    kubelet: testing.StandInKubelet, start_plugin: StartPlugin, gpus: devices.DeviceSet, socket_dir: pathlib.Path
) -> None:
    device_plugin = start_plugin(gpus)
    registration = kubelet.next_registration()
    with kubelet.dial(registration) as client:
        stream = client.list_and_watch()
        stream.next()
        device_plugin.stop()
        assert stream.ended() == grpc.StatusCode.OK
    assert not (socket_dir / registration.endpoint).exists()
