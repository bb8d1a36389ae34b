"""A device plugin's whole life: serve, register, and keep both true while kubelets come and go.

`DevicePlugin` ties the server, registration and health together. One background thread polls,
every `poll_interval`, the three facts that can change under it: the kubelet's socket (a new one
means a restarted kubelet: register again), the plugin's own socket (a restarted kubelet removes
it: serve again first), and the optional health file. Polling a stat is cheap and needs no
inotify library; the interval bounds how late a re-registration can be, and is never used by the
tests as a synchronisation sleep (they wait on what the stand-in kubelet observes).
"""

from __future__ import annotations

import dataclasses
import logging
import pathlib
import threading
import time
from types import TracebackType

from fake_devices.deviceplugin import devices, health, registration, server, vendors

logger = logging.getLogger(__name__)

MAX_RETRY_DELAY = 5.0


@dataclasses.dataclass(frozen=True)
class Config:
    """Where and how to serve; defaults are the kubelet's (`/var/lib/kubelet/device-plugins`)."""

    socket_dir: pathlib.Path = pathlib.Path(devices.DEVICE_PLUGIN_PATH)
    endpoint: str | None = None  # socket file name; None derives one from the resource name
    visible_devices_env: str | None = None  # None takes the vendor's, see vendors.py
    poll_interval: float = 0.5
    register_timeout: float = 5.0
    # Device ids listed here (one a line) are reported unhealthy; see health.read_health_file.
    health_file: pathlib.Path | None = None

    def validate(self) -> list[str]:
        problems = []
        if self.poll_interval <= 0:
            problems.append(f"poll_interval: expected a number of seconds > 0, got {self.poll_interval}")
        if self.register_timeout <= 0:
            problems.append(f"register_timeout: expected a number of seconds > 0, got {self.register_timeout}")
        if self.endpoint is not None and (not self.endpoint or "/" in self.endpoint or self.endpoint == devices.KUBELET_SOCKET):
            problems.append(f"endpoint: expected a socket file name in socket_dir other than {devices.KUBELET_SOCKET}, got {self.endpoint!r}")
        return problems


class DevicePlugin:
    """Serves one DeviceSet to whichever kubelet owns `config.socket_dir`."""

    def __init__(self, device_set: devices.DeviceSet, config: Config = Config()) -> None:
        problems = config.validate()
        if problems:
            raise ValueError("invalid device plugin config: " + "; ".join(problems))
        self.device_set = device_set
        self.config = config
        self.endpoint = config.endpoint or registration.default_endpoint(device_set.resource_name)
        self.visible_devices_env = config.visible_devices_env or vendors.visible_devices_env(device_set.resource_name)
        self.health = health.DeviceHealth(device_set)
        self.server = server.Server(device_set, self.health, config.socket_dir / self.endpoint, self.visible_devices_env)
        # Set when the kubelet rejected the registration: the API says the plugin should then exit.
        self.failure: registration.RegistrationError | None = None
        self.failed = threading.Event()
        self._registered_with: registration.FileIdentity | None = None
        self._retry_at = 0.0
        self._retry_delay = config.poll_interval
        self._health_file_listed: set[str] = set()
        self._file_unhealthy: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def kubelet_socket(self) -> pathlib.Path:
        return self.config.socket_dir / devices.KUBELET_SOCKET

    def start(self) -> None:
        """Serve, apply the health file, register if a kubelet is there; then keep watching.

        Raises RegistrationError at once when a present kubelet rejects the plugin; a missing
        kubelet is waited for.
        """
        if self._thread is not None:
            return
        self.server.start()
        try:
            self._poll_health_file()
            self._sync_registration()
            if self._registered_with is None:
                logger.info("not registered yet: waiting for a kubelet at %s", self.kubelet_socket)
        except BaseException:
            self.server.stop()
            raise
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name=f"deviceplugin-watch-{self.endpoint}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching and serving, and remove the plugin's socket."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._thread = None
        self.server.stop()

    def set_health(self, device_id: str, healthy: bool) -> bool:
        """Flip one device's health; the ListAndWatch streams send the new list. True if it changed."""
        return self.health.set(device_id, healthy)

    def __enter__(self) -> DevicePlugin:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def _watch(self) -> None:
        while not self._stop.wait(self.config.poll_interval):
            try:
                self._poll_health_file()
                self._sync_registration()
            except registration.RegistrationError as err:
                logger.error("%s; the plugin stops, as the device plugin API asks of a rejected plugin", err)
                self.failure = err
                self.failed.set()
                return
            except Exception:  # keep a long-running plugin alive through a bad poll; it is logged
                logger.exception("device plugin watch failed; retrying at the next poll")

    def _sync_registration(self) -> None:
        """Serve and register again if the kubelet socket is new or the plugin's socket is gone."""
        kubelet = registration.FileIdentity.of(self.kubelet_socket)
        if kubelet is None:
            if self._registered_with is not None:
                logger.info("%s is gone: waiting for the kubelet to come back", self.kubelet_socket)
            self._registered_with = None
            return
        own_socket_gone = not self.server.socket_path.exists()
        if kubelet == self._registered_with and not own_socket_gone:
            return
        if time.monotonic() < self._retry_at:
            return
        if own_socket_gone:
            logger.info("%s was removed (a kubelet restart sweeps the directory): serving again", self.server.socket_path)
            self.server.stop()
            self.server.start()
        try:
            registration.register(
                self.config.socket_dir, self.endpoint, self.device_set.resource_name, server.options(), self.config.register_timeout
            )
        except registration.RegistrationError as err:
            if not err.retryable:
                raise
            self._retry_at = time.monotonic() + self._retry_delay
            logger.warning("%s; retrying in %.1fs", err, self._retry_delay)
            self._retry_delay = min(self._retry_delay * 2, MAX_RETRY_DELAY)
            return
        self._registered_with = kubelet
        self._retry_at, self._retry_delay = 0.0, self.config.poll_interval

    def _poll_health_file(self) -> None:
        """Apply changes in the health file: ids added turn unhealthy, ids removed turn healthy."""
        if self.config.health_file is None:
            return
        listed = health.read_health_file(self.config.health_file)
        if listed == self._health_file_listed:
            return
        self._health_file_listed = listed
        known = {d.id for d in self.device_set.devices}
        if listed - known:
            logger.warning("%s: ignoring unknown device ids %s; known: %s", self.config.health_file, sorted(listed - known), sorted(known))
        unhealthy = listed & known
        changes = {d: False for d in unhealthy - self._file_unhealthy} | {d: True for d in self._file_unhealthy - unhealthy}
        self._file_unhealthy = unhealthy
        self.health.update(changes)
