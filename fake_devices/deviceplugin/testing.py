"""A stand-in kubelet: the kubelet's half of the device plugin protocol, for tests.

It serves Registration on `kubelet.sock` in a directory, records every RegisterRequest (and, like
the kubelet, rejects an unsupported version or an invalid resource name), and dials a registered
plugin back over its endpoint to call ListAndWatch, GetPreferredAllocation and Allocate, all over
real gRPC on unix sockets. `restart()` does what a kubelet restart does to the directory: removes
the sockets in it and creates a new `kubelet.sock`.

Everything observed arrives through queues, so a test waits on a fact with a deadline
(`next_registration(timeout=...)`, `DeviceStream.next(timeout=...)`) instead of sleeping.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import pathlib
import queue
import re
import stat
import threading
from types import TracebackType
from typing import Iterable

import grpc

from fake_devices.deviceplugin import devices, registration
from fake_devices.deviceplugin.generated import api_pb2, api_pb2_grpc

logger = logging.getLogger(__name__)

SUPPORTED_VERSIONS = (devices.API_VERSION,)
DEFAULT_TIMEOUT = 5.0
_EXTENDED_RESOURCE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


@dataclasses.dataclass(frozen=True)
class Registration:
    """One RegisterRequest as the kubelet received it."""

    version: str
    endpoint: str
    resource_name: str
    pre_start_required: bool
    get_preferred_allocation_available: bool


@dataclasses.dataclass(frozen=True)
class ListedDevice:
    """One device of a ListAndWatch message."""

    id: str
    health: str
    numa_nodes: tuple[int, ...]


class _RegistrationServicer(api_pb2_grpc.RegistrationServicer):
    def __init__(self, received: queue.Queue[Registration], supported_versions: tuple[str, ...]) -> None:
        self._received = received
        self._supported = supported_versions

    def Register(self, request: api_pb2.RegisterRequest, context: grpc.ServicerContext) -> api_pb2.Empty:
        """Record, then judge as the kubelet's device manager does (its messages, its Unknown code)."""
        self._received.put(
            Registration(
                version=request.version,
                endpoint=request.endpoint,
                resource_name=request.resource_name,
                pre_start_required=request.options.pre_start_required,
                get_preferred_allocation_available=request.options.get_preferred_allocation_available,
            )
        )
        if request.version not in self._supported:
            message = f"requested API version {request.version!r} is not supported by kubelet. Supported versions are {list(self._supported)!r}"
            context.abort(grpc.StatusCode.UNKNOWN, message)
        if not _EXTENDED_RESOURCE.match(request.resource_name):
            context.abort(grpc.StatusCode.UNKNOWN, f"the ResourceName {request.resource_name!r} is invalid")
        return api_pb2.Empty()


class StandInKubelet:
    """Registration on `<socket_dir>/kubelet.sock`; `registrations` holds what plugins sent.

    `supported_versions` is read at each start: change it and restart to play a kubelet that
    rejects the plugin.
    """

    def __init__(self, socket_dir: pathlib.Path, supported_versions: tuple[str, ...] = SUPPORTED_VERSIONS) -> None:
        self.socket_dir = socket_dir
        self.supported_versions = supported_versions
        self.registrations: queue.Queue[Registration] = queue.Queue()
        self._server: grpc.Server | None = None

    @property
    def socket_path(self) -> pathlib.Path:
        return self.socket_dir / devices.KUBELET_SOCKET

    def start(self, sweep: bool = True) -> None:
        """Serve Registration; with `sweep`, first remove every socket in the directory, as the kubelet does."""
        if sweep:
            for entry in self.socket_dir.iterdir():
                if stat.S_ISSOCK(entry.lstat().st_mode):
                    entry.unlink()
        server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="stand-in-kubelet"))
        api_pb2_grpc.add_RegistrationServicer_to_server(_RegistrationServicer(self.registrations, self.supported_versions), server)  # type: ignore[no-untyped-call]  # generated stubs are untyped
        server.add_insecure_port(f"unix://{self.socket_path}")
        server.start()
        self._server = server

    def stop(self) -> None:
        """Stop serving and remove `kubelet.sock`, as a kubelet that exits leaves no live socket."""
        if self._server is not None:
            self._server.stop(None).wait()
            self._server = None
        self.socket_path.unlink(missing_ok=True)

    def restart(self, sweep: bool = True) -> None:
        """Stop, then start with a `kubelet.sock` a plugin can tell from the old one.

        A real restart takes seconds, so its socket always has a new ctime. A stand-in restarting
        within one timestamp tick of a coarse-clock filesystem, with the inode number reused, would
        leave a socket indistinguishable by stat; it is made again until it differs.
        """
        old = registration.FileIdentity.of(self.socket_path)
        for _ in range(1000):
            self.stop()
            self.start(sweep=sweep)
            if registration.FileIdentity.of(self.socket_path) != old:
                return
        raise RuntimeError(f"{self.socket_path}: recreated 1000 times with the same inode and ctime {old}")

    def next_registration(self, timeout: float = DEFAULT_TIMEOUT) -> Registration:
        """The next RegisterRequest received; TimeoutError if none comes within `timeout` seconds."""
        try:
            return self.registrations.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"{self.socket_path}: no RegisterRequest within {timeout}s") from None

    def dial(self, registration: Registration) -> PluginClient:
        """A client on the plugin's endpoint, as the kubelet dials it after a registration."""
        return PluginClient(self.socket_dir / registration.endpoint)

    def __enter__(self) -> StandInKubelet:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


class DeviceStream:
    """An open ListAndWatch stream; a thread moves each message into a queue for `next()`."""

    def __init__(self, call: grpc.Call) -> None:
        self._call = call
        self._messages: queue.Queue[tuple[ListedDevice, ...] | None] = queue.Queue()  # None: ended
        self._ended = threading.Event()
        self.status: grpc.StatusCode | None = None
        self._thread = threading.Thread(target=self._read, name="stand-in-kubelet-listandwatch", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        code = grpc.StatusCode.OK
        try:
            for response in self._call:  # a streaming call is iterable
                self._messages.put(tuple(_listed(d) for d in response.devices))
        except grpc.RpcError as err:
            code = err.code() if isinstance(err, grpc.Call) else grpc.StatusCode.UNKNOWN
        self.status = code
        self._ended.set()
        self._messages.put(None)

    def next(self, timeout: float = DEFAULT_TIMEOUT) -> tuple[ListedDevice, ...]:
        """The next device list; TimeoutError if none within `timeout`, EOFError if the stream ended."""
        try:
            item = self._messages.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no ListAndWatch message within {timeout}s") from None
        if item is None:
            self._messages.put(None)  # stays ended for later calls
            raise EOFError(f"ListAndWatch stream ended with {self.status}")
        return item

    def ended(self, timeout: float = DEFAULT_TIMEOUT) -> grpc.StatusCode:
        """Wait for the stream to end (messages still queued stay readable); its status code."""
        if not self._ended.wait(timeout):
            raise TimeoutError(f"ListAndWatch stream still open after {timeout}s")
        assert self.status is not None
        return self.status

    def close(self) -> None:
        self._call.cancel()
        self._thread.join(DEFAULT_TIMEOUT)


class PluginClient:
    """The kubelet's calls on a plugin's socket, returning plain Python values."""

    def __init__(self, socket_path: pathlib.Path) -> None:
        self.socket_path = socket_path
        self._channel = grpc.insecure_channel(f"unix://{socket_path}")
        self._stub = api_pb2_grpc.DevicePluginStub(self._channel)  # type: ignore[no-untyped-call]  # generated stubs are untyped
        self._streams: list[DeviceStream] = []

    def options(self) -> api_pb2.DevicePluginOptions:
        response: api_pb2.DevicePluginOptions = self._stub.GetDevicePluginOptions(api_pb2.Empty(), timeout=DEFAULT_TIMEOUT)
        return response

    def list_and_watch(self) -> DeviceStream:
        stream = DeviceStream(self._stub.ListAndWatch(api_pb2.Empty()))
        self._streams.append(stream)
        return stream

    def preferred_allocation(self, available: Iterable[str], size: int, must_include: Iterable[str] = ()) -> list[str]:
        request = api_pb2.PreferredAllocationRequest(
            container_requests=[
                api_pb2.ContainerPreferredAllocationRequest(
                    available_deviceIDs=list(available), must_include_deviceIDs=list(must_include), allocation_size=size
                )
            ]
        )
        response = self._stub.GetPreferredAllocation(request, timeout=DEFAULT_TIMEOUT)
        return list(response.container_responses[0].deviceIDs)

    def allocate(self, *containers: Iterable[str]) -> list[dict[str, str]]:
        """Allocate for one or more containers; each container's environment variables."""
        request = api_pb2.AllocateRequest(container_requests=[api_pb2.ContainerAllocateRequest(devices_ids=list(c)) for c in containers])
        response = self._stub.Allocate(request, timeout=DEFAULT_TIMEOUT)
        return [dict(c.envs) for c in response.container_responses]

    def pre_start_container(self, device_ids: Iterable[str]) -> None:
        self._stub.PreStartContainer(api_pb2.PreStartContainerRequest(devices_ids=list(device_ids)), timeout=DEFAULT_TIMEOUT)

    def close(self) -> None:
        for stream in self._streams:
            stream.close()
        self._channel.close()

    def __enter__(self) -> PluginClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _listed(device: api_pb2.Device) -> ListedDevice:
    return ListedDevice(id=device.ID, health=device.health, numa_nodes=tuple(n.ID for n in device.topology.nodes))
