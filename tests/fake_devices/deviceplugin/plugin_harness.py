"""What the device plugin's tests share besides fixtures: the type of the `start_plugin` fixture
(conftest.py), imported by the tests that annotate it, never from the conftest."""

from __future__ import annotations

from typing import Callable

from fake_devices.deviceplugin import plugin

# start_plugin(device_set, **config) -> a started DevicePlugin, stopped at teardown.
StartPlugin = Callable[..., plugin.DevicePlugin]
