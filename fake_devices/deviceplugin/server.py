"""The DevicePlugin gRPC service on a unix socket: what the kubelet dials after registration.

The method names are the kubelet API's (GetDevicePluginOptions, ListAndWatch,
GetPreferredAllocation, Allocate, PreStartContainer) so a reader can hold this file next to
the kubelet's `pkg/apis/deviceplugin/v1beta1/api.proto`. Errors go back as gRPC status codes with a message naming the request item,
the device ids and what was expected: the kubelet logs them verbatim in the pod's events.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import pathlib
import threading
from typing import Iterator, NoReturn

import grpc

from fake_devices.deviceplugin import allocation, devices, health, vendors
from fake_devices.deviceplugin.generated import api_pb2, api_pb2_grpc

logger = logging.getLogger(__name__)

# sun_path is 108 bytes on Linux, one of them the terminating NUL.
MAX_SOCKET_PATH = 107
# Each ListAndWatch stream holds a worker for its lifetime; the kubelet opens one per plugin.
MAX_WORKERS = 16
# How long stopping waits for open streams to end: on a loaded machine their last message and
# status can take longer than the server's shutdown grace, which would cut them (UNAVAILABLE).
STREAMS_END_TIMEOUT_S = 10.0


class ServeError(RuntimeError):
    """The plugin's socket could not be served."""


def to_proto(device: devices.Device) -> api_pb2.Device:
    return api_pb2.Device(
        ID=device.id,
        health=devices.HEALTHY if device.healthy else devices.UNHEALTHY,
        topology=api_pb2.TopologyInfo(nodes=[api_pb2.NUMANode(ID=device.numa_node)]),
    )


class DevicePluginServicer(api_pb2_grpc.DevicePluginServicer):
    """One server's worth of the service; `stop()` ends its ListAndWatch streams."""

    def __init__(self, device_set: devices.DeviceSet, device_health: health.DeviceHealth, visible_devices_env: str) -> None:
        self._device_set = device_set
        self._health = device_health
        self._env = visible_devices_env
        self._stopped = threading.Event()
        # ListAndWatch streams not yet finished (their status sent): stop() waits for them, so a
        # kubelet sees its stream end with OK rather than cut by the server's shutdown.
        self._open_streams = 0
        self._streams_changed = threading.Condition()

    def stop(self, timeout_s: float = STREAMS_END_TIMEOUT_S) -> None:
        """End every ListAndWatch stream and wait, up to `timeout_s`, until each has ended."""
        self._stopped.set()
        self._health.wake()
        with self._streams_changed:
            self._streams_changed.wait_for(lambda: self._open_streams == 0, timeout_s)

    def _stream_opened(self, context: grpc.ServicerContext) -> None:
        with self._streams_changed:
            self._open_streams += 1
        # The callback runs once the RPC is over, its status sent; False: it is over already.
        if not context.add_callback(self._stream_closed):
            self._stream_closed()

    def _stream_closed(self) -> None:
        with self._streams_changed:
            self._open_streams -= 1
            self._streams_changed.notify_all()

    def GetDevicePluginOptions(self, request: api_pb2.Empty, context: grpc.ServicerContext) -> api_pb2.DevicePluginOptions:
        return options()

    def ListAndWatch(self, request: api_pb2.Empty, context: grpc.ServicerContext) -> Iterator[api_pb2.ListAndWatchResponse]:
        """The full device list now, then again after every health change, until either side stops."""
        context.add_callback(self._health.wake)  # a cancelled stream must not wait for the next flip
        self._stream_opened(context)

        def done() -> bool:
            return self._stopped.is_set() or not context.is_active()

        generation, current = self._health.snapshot()
        logger.debug("ListAndWatch: sending %d devices (generation %d)", len(current), generation)
        yield api_pb2.ListAndWatchResponse(devices=[to_proto(d) for d in current])
        while True:
            changed = self._health.wait_for_change(generation, done)
            if changed is None:
                logger.debug("ListAndWatch: stream ends")
                return
            generation, current = changed
            logger.debug("ListAndWatch: sending %d devices (generation %d)", len(current), generation)
            yield api_pb2.ListAndWatchResponse(devices=[to_proto(d) for d in current])

    def GetPreferredAllocation(
        self, request: api_pb2.PreferredAllocationRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreferredAllocationResponse:
        responses = []
        for i, container in enumerate(request.container_requests):
            wanted = allocation.Request(
                available=tuple(container.available_deviceIDs),
                must_include=tuple(container.must_include_deviceIDs),
                size=container.allocation_size,
            )
            try:
                chosen = allocation.preferred(self._device_set, wanted)
            except allocation.AllocationError as err:
                _abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"GetPreferredAllocation: container_requests[{i}]: {err}")
            responses.append(api_pb2.ContainerPreferredAllocationResponse(deviceIDs=chosen))
        return api_pb2.PreferredAllocationResponse(container_responses=responses)

    def Allocate(self, request: api_pb2.AllocateRequest, context: grpc.ServicerContext) -> api_pb2.AllocateResponse:
        """The vendor's visible-devices variable per container; unknown ids fail the whole call."""
        known = self._device_set.index()
        responses = []
        for i, container in enumerate(request.container_requests):
            ids = list(container.devices_ids)
            unknown = [d for d in ids if d not in known]
            if unknown:
                _abort(
                    context,
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"Allocate: container_requests[{i}]: unknown device ids {unknown} for {self._device_set.resource_name}; "
                    f"expected ids this plugin advertises: {sorted(known)}",
                )
            logger.info("Allocate: %s=%s", self._env, vendors.visible_devices_value(ids))
            responses.append(api_pb2.ContainerAllocateResponse(envs={self._env: vendors.visible_devices_value(ids)}))
        return api_pb2.AllocateResponse(container_responses=responses)

    def PreStartContainer(
        self, request: api_pb2.PreStartContainerRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreStartContainerResponse:
        """Not required (options say so); answered anyway, as a no-op, for kubelets that call it."""
        return api_pb2.PreStartContainerResponse()


def options() -> api_pb2.DevicePluginOptions:
    """What the plugin tells the kubelet at registration and from GetDevicePluginOptions."""
    return api_pb2.DevicePluginOptions(pre_start_required=False, get_preferred_allocation_available=True)


def _abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    logger.warning("%s", message)
    context.abort(code, message)
    raise AssertionError("unreachable: ServicerContext.abort raises")  # for the type checker


class Server:
    """The service bound to `socket_path`; start and stop may repeat (the kubelet sweeps sockets)."""

    def __init__(
        self, device_set: devices.DeviceSet, device_health: health.DeviceHealth, socket_path: pathlib.Path, visible_devices_env: str
    ) -> None:
        self.socket_path = socket_path
        self._device_set = device_set
        self._health = device_health
        self._env = visible_devices_env
        self._grpc: grpc.Server | None = None
        self._servicer: DevicePluginServicer | None = None

    def start(self) -> None:
        if self._grpc is not None:
            return
        path = str(self.socket_path)
        if len(path.encode()) > MAX_SOCKET_PATH:
            raise ServeError(
                f"{path}: socket path is {len(path.encode())} bytes, expected at most {MAX_SOCKET_PATH} (the unix socket limit); "
                "use a shorter --socket-dir or --endpoint"
            )
        if not self.socket_path.parent.is_dir():
            raise ServeError(f"{self.socket_path.parent}: device plugin directory does not exist; create it or mount the kubelet's")
        _unlink(self.socket_path)  # a socket left by an earlier run would make bind fail
        servicer = DevicePluginServicer(self._device_set, self._health, self._env)
        server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="deviceplugin"))
        api_pb2_grpc.add_DevicePluginServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]  # generated stubs are untyped
        try:
            server.add_insecure_port(f"unix://{path}")
        except RuntimeError as err:
            raise ServeError(f"{path}: could not listen on the unix socket: {err}; is the directory writable?") from err
        server.start()
        self._grpc, self._servicer = server, servicer
        logger.info("serving %s on %s", self._device_set.resource_name, path)

    def stop(self, grace: float = 1.0) -> None:
        """End the streams, stop serving, and remove the socket so no kubelet dials a dead plugin."""
        server, servicer = self._grpc, self._servicer
        self._grpc = self._servicer = None
        if server is None or servicer is None:
            return
        servicer.stop()
        server.stop(grace).wait()
        _unlink(self.socket_path)
        logger.info("stopped serving on %s", self.socket_path)

    @property
    def serving(self) -> bool:
        return self._grpc is not None


def _unlink(path: pathlib.Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
