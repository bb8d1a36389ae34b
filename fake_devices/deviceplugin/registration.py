"""Registration with the kubelet, and noticing when the kubelet restarts.

A plugin registers by calling Registration.Register on `kubelet.sock` in the device-plugin
directory, naming its own socket (the endpoint, a file name in the same directory), its resource
name and its options. The kubelet then dials the endpoint and opens ListAndWatch. A restarted
kubelet knows nothing of earlier plugins: it removes the sockets in the directory and creates a
new `kubelet.sock`, and a plugin must serve again and re-register. `FileIdentity` is how the
plugin tells a new `kubelet.sock` from the old one by polling (no inotify dependency): a socket
that is replaced gets a new inode or, should the inode number be reused at once, a new ctime.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pathlib

import grpc

from fake_devices.deviceplugin import devices
from fake_devices.deviceplugin.generated import api_pb2, api_pb2_grpc

logger = logging.getLogger(__name__)

# Codes that mean "no kubelet there right now" (not listening yet, or exiting mid-call): try again
# at the next poll. Anything else is the kubelet's answer (its rejections of a wrong version or an
# invalid or taken resource name come back as UNKNOWN) and the plugin should stop.
RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED})


class RegistrationError(RuntimeError):
    """Register failed; `retryable` says whether the kubelet was merely not there."""

    def __init__(self, message: str, code: grpc.StatusCode | None) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = code is None or code in RETRYABLE


@dataclasses.dataclass(frozen=True)
class FileIdentity:
    """What changes when a file at the same path is replaced by a new one."""

    device: int
    inode: int
    ctime_ns: int

    @classmethod
    def of(cls, path: pathlib.Path) -> FileIdentity | None:
        """The identity of the file at `path`, or None when there is none."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return cls(device=st.st_dev, inode=st.st_ino, ctime_ns=st.st_ctime_ns)


def register(
    socket_dir: pathlib.Path, endpoint: str, resource_name: str, options: api_pb2.DevicePluginOptions, timeout: float = 5.0
) -> None:
    """Call Registration.Register on the kubelet's socket in `socket_dir`; raise RegistrationError."""
    kubelet = socket_dir / devices.KUBELET_SOCKET
    if not kubelet.exists():
        raise RegistrationError(f"{kubelet}: no kubelet socket; is the kubelet running and its device-plugins directory mounted here?", None)
    request = api_pb2.RegisterRequest(
        version=devices.API_VERSION,
        endpoint=endpoint,
        resource_name=resource_name,
        options=options,
    )
    with grpc.insecure_channel(f"unix://{kubelet}") as channel:
        try:
            stub = api_pb2_grpc.RegistrationStub(channel)  # type: ignore[no-untyped-call]  # generated stubs are untyped
            stub.Register(request, timeout=timeout)
        except grpc.RpcError as err:
            code = err.code() if isinstance(err, grpc.Call) else None
            details = err.details() if isinstance(err, grpc.Call) else str(err)
            raise RegistrationError(
                f"{kubelet}: Register of {resource_name} (endpoint {endpoint}, version {devices.API_VERSION}) failed: "
                f"{code.name if code else 'error'}: {details}",
                code,
            ) from err
    logger.info("registered %s with the kubelet at %s (endpoint %s)", resource_name, kubelet, endpoint)


def default_endpoint(resource_name: str) -> str:
    """A socket file name from the resource name: `nvidia.com/gpu` -> `vck-nvidia.com-gpu.sock`."""
    return "vck-" + resource_name.replace("/", "-") + ".sock"
