"""Device health that can change while the plugin runs, and the wake-ups ListAndWatch waits on.

The DeviceSet is frozen (it is what the node has); health is the one thing that flips at run
time. Every change bumps a generation number and wakes the ListAndWatch streams, each of which
sends the whole list again, as the API asks ("Whenever a Device state change ... returns the new
list"). Health flips by a method call (tests, a profile driver) or through a health file the
plugin polls (`kubectl exec` on a kind node), see `read_health_file`.
"""

from __future__ import annotations

import dataclasses
import logging
import pathlib
import threading
from typing import Callable, Mapping

from fake_devices.deviceplugin import devices

logger = logging.getLogger(__name__)


class UnknownDeviceError(KeyError):
    """A health change for a device the set does not have."""

    def __str__(self) -> str:
        return str(self.args[0])


class DeviceHealth:
    """The current health of each device of a set; thread-safe, one lock for all of it."""

    def __init__(self, device_set: devices.DeviceSet) -> None:
        self._device_set = device_set
        self._healthy = {d.id: d.healthy for d in device_set.devices}
        self._generation = 0
        self._changed = threading.Condition()

    def set(self, device_id: str, healthy: bool) -> bool:
        """Flip one device; True if that changed anything (and so woke the streams)."""
        return self.update({device_id: healthy})

    def update(self, health: Mapping[str, bool]) -> bool:
        """Apply several flips at once, so the streams send one list for them all."""
        unknown = sorted(set(health) - set(self._healthy))
        if unknown:
            raise UnknownDeviceError(
                f"health change for unknown device ids {unknown} of {self._device_set.resource_name}; known: {sorted(self._healthy)}"
            )
        with self._changed:
            changed = {d: h for d, h in health.items() if self._healthy[d] != h}
            if not changed:
                return False
            self._healthy.update(changed)
            self._generation += 1
            self._changed.notify_all()
        logger.info("%s health changed: %s", self._device_set.resource_name, changed)
        return True

    def snapshot(self) -> tuple[int, tuple[devices.Device, ...]]:
        """The generation and the devices with their current health, in the set's order."""
        with self._changed:
            return self._generation, self._current()

    def wait_for_change(self, generation: int, done: Callable[[], bool]) -> tuple[int, tuple[devices.Device, ...]] | None:
        """Block until the generation moves past `generation` (the new snapshot) or `done()` (None).

        `done` is checked on every wake-up; whoever makes it true must call `wake()`.
        """
        with self._changed:
            self._changed.wait_for(lambda: done() or self._generation != generation)
            if done():
                return None
            return self._generation, self._current()

    def wake(self) -> None:
        """Make every waiter re-check its `done` (a stream was cancelled, the server is stopping)."""
        with self._changed:
            self._changed.notify_all()

    def _current(self) -> tuple[devices.Device, ...]:
        return tuple(dataclasses.replace(d, healthy=self._healthy[d.id]) for d in self._device_set.devices)


def read_health_file(path: pathlib.Path) -> set[str]:
    """The device ids a health file marks unhealthy: one per line, `#` starts a comment.

    A missing file marks none. The plugin applies changes only: an id added turns that device
    unhealthy, an id removed turns it healthy again; devices never listed keep their health.
    """
    try:
        text = path.read_text()
    except FileNotFoundError:
        return set()
    return {line.split("#", 1)[0].strip() for line in text.splitlines()} - {""}
