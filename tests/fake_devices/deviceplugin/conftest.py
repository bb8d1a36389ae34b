"""Fixtures for the device plugin's protocol tests: a stand-in kubelet and plugins in a temp dir.

Nothing here needs a cluster (no `cluster` marker): everything is real gRPC over unix sockets in
a temporary directory, and every wait is on an observed fact with a deadline.
"""

from __future__ import annotations

import pathlib
import shutil
import tempfile
from typing import Iterator

import pytest

from fake_devices.deviceplugin import devices, plugin, server, testing
from tests.fake_devices.deviceplugin.plugin_harness import StartPlugin

# Long enough for any endpoint the tests use (vck-metax-tech.com-gpu.sock is 27 bytes).
_LONGEST_ENDPOINT = "x" * 40


@pytest.fixture
def socket_dir(tmp_path: pathlib.Path) -> Iterator[pathlib.Path]:
    """tmp_path, unless a socket in it would pass the unix socket path limit: then a short dir in /tmp."""
    if len(str(tmp_path / _LONGEST_ENDPOINT).encode()) <= server.MAX_SOCKET_PATH:
        yield tmp_path
        return
    short = pathlib.Path(tempfile.mkdtemp(prefix="vck-dp-", dir="/tmp" if pathlib.Path("/tmp").is_dir() else None))
    try:
        yield short
    finally:
        shutil.rmtree(short, ignore_errors=True)


@pytest.fixture
def kubelet(socket_dir: pathlib.Path) -> Iterator[testing.StandInKubelet]:
    with testing.StandInKubelet(socket_dir) as stand_in:
        yield stand_in


@pytest.fixture
def gpus() -> devices.DeviceSet:
    """The 8-GPU, 2-NUMA server: GPU-0..3 on node 0, GPU-4..7 on node 1."""
    return devices.synthetic("nvidia.com/gpu", count=8, numa_nodes=2)


@pytest.fixture
def start_plugin(socket_dir: pathlib.Path) -> Iterator[StartPlugin]:
    """Start a DevicePlugin serving in socket_dir (polling fast); every one is stopped at teardown."""
    started: list[plugin.DevicePlugin] = []

    def start(device_set: devices.DeviceSet, **config: object) -> plugin.DevicePlugin:
        config.setdefault("socket_dir", socket_dir)
        config.setdefault("poll_interval", 0.02)
        device_plugin = plugin.DevicePlugin(device_set, plugin.Config(**config))  # type: ignore[arg-type]
        device_plugin.start()
        started.append(device_plugin)
        return device_plugin

    yield start
    for device_plugin in reversed(started):
        device_plugin.stop()
