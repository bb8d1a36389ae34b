"""The device set a plugin serves: plain frozen dataclasses, so a profile loader can build one.

The plugin knows nothing of profiles or YAML: whatever describes a node's GPUs (a device profile,
the CLI's `--count/--numa-nodes`, a test) turns it into a `DeviceSet`, validated here once.
"""

from __future__ import annotations

import dataclasses
import re

# Health strings of the API (k8s.io/kubelet pkg/apis/deviceplugin/v1beta1/constants.go).
HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"
API_VERSION = "v1beta1"
DEVICE_PLUGIN_PATH = "/var/lib/kubelet/device-plugins"
KUBELET_SOCKET = "kubelet.sock"

# The kubelet accepts only a domain-prefixed extended resource name: `<dns subdomain>/<name>`.
_RESOURCE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
MAX_DEVICE_ID = 63  # "Max length of this field is 63 characters" (api.proto, Device.ID)


class DeviceSetError(ValueError):
    """A device set that the kubelet would reject or the plugin cannot serve; lists every problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid device set: " + "; ".join(problems))


@dataclasses.dataclass(frozen=True)
class Device:
    """One device as the kubelet sees it: its id, the NUMA node it hangs off, and its health."""

    id: str
    numa_node: int
    healthy: bool = True


@dataclasses.dataclass(frozen=True)
class DeviceSet:
    """The devices of one extended resource on one node.

    `links[i][j]` scores the link between `devices[i]` and `devices[j]` (higher is better, such as
    the number of NVLinks; 0 means none): GetPreferredAllocation uses it to keep an allocation on
    well-linked GPUs. Empty means no link information. The matrix is symmetric; the diagonal is
    ignored.
    """

    resource_name: str
    devices: tuple[Device, ...]
    links: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        problems = validate(self)
        if problems:
            raise DeviceSetError(problems)

    def index(self) -> dict[str, int]:
        """Device id to its position in `devices` (and row in `links`)."""
        return {device.id: i for i, device in enumerate(self.devices)}

    def link(self, a: int, b: int) -> int:
        return self.links[a][b] if self.links else 0


def validate(device_set: DeviceSet) -> list[str]:
    """Every problem with a device set, each saying what was expected and what was found."""
    problems: list[str] = []
    if not _RESOURCE_NAME.match(device_set.resource_name):
        problems.append(
            f"resource_name: expected a domain-prefixed extended resource name such as nvidia.com/gpu, got {device_set.resource_name!r}"
        )
    if not device_set.devices:
        problems.append("devices: expected at least one device, got none")
    seen: set[str] = set()
    for i, device in enumerate(device_set.devices):
        if not device.id or len(device.id) > MAX_DEVICE_ID or any(c.isspace() or c == "," for c in device.id):
            problems.append(f"devices[{i}].id: expected 1 to {MAX_DEVICE_ID} characters without spaces or commas, got {device.id!r}")
        if device.id in seen:
            problems.append(f"devices[{i}].id: {device.id!r} appears more than once; device ids must be unique")
        seen.add(device.id)
        if isinstance(device.numa_node, bool) or not isinstance(device.numa_node, int) or device.numa_node < 0:
            problems.append(f"devices[{i}].numa_node: expected an integer >= 0, got {device.numa_node!r}")
    problems.extend(_link_problems(device_set))
    return problems


def _link_problems(device_set: DeviceSet) -> list[str]:
    links, n = device_set.links, len(device_set.devices)
    if not links:
        return []
    if len(links) != n or any(len(row) != n for row in links):
        shape = f"{len(links)} rows of lengths {sorted({len(row) for row in links})}"
        return [f"links: expected a {n}x{n} matrix (one row and column per device), got {shape}"]
    problems = []
    for i in range(n):
        for j in range(n):
            value = links[i][j]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                problems.append(f"links[{i}][{j}]: expected an integer >= 0, got {value!r}")
            elif j > i and links[j][i] != value:
                problems.append(f"links[{i}][{j}]: expected the same score as links[{j}][{i}] ({links[j][i]!r}), got {value!r}")
    return problems


def synthetic(resource_name: str, count: int, numa_nodes: int = 1, prefix: str | None = None) -> DeviceSet:
    """`count` devices spread over `numa_nodes` in contiguous blocks, as on a typical GPU server.

    Devices on the same NUMA node are linked with score 2, across nodes with score 1, so
    preferred allocations stay on one socket. Ids are `<prefix>-<n>`; the prefix defaults to the
    part of the resource name after the slash, upper-cased for GPUs (`GPU-0`), as is (`Ascend910-0`).
    """
    problems = []
    if count < 1:
        problems.append(f"count: expected an integer >= 1, got {count}")
    if numa_nodes < 1:
        problems.append(f"numa_nodes: expected an integer >= 1, got {numa_nodes}")
    elif count >= 1 and numa_nodes > count:
        problems.append(f"numa_nodes: expected at most count ({count}) NUMA nodes so each has a device, got {numa_nodes}")
    if problems:
        raise DeviceSetError(problems)
    name = prefix if prefix is not None else resource_name.rpartition("/")[2]
    name = name.upper() if name == "gpu" else name
    # Contiguous, balanced blocks: 8 over 2 nodes is 0-3 and 4-7; every node gets a device.
    devices = tuple(Device(id=f"{name}-{i}", numa_node=i * numa_nodes // count) for i in range(count))
    links = tuple(tuple(2 if a.numa_node == b.numa_node else 1 for b in devices) for a in devices)
    return DeviceSet(resource_name=resource_name, devices=devices, links=links)
