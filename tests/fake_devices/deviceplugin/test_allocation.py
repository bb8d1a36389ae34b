"""The preferred-allocation rule and the device set's validation, table-driven on plain data."""

from __future__ import annotations

import dataclasses

import pytest

from fake_devices.deviceplugin import allocation, devices, vendors


def server(numa: list[int], links: list[list[int]] | None = None) -> devices.DeviceSet:
    """Devices GPU-0.. on the given NUMA nodes, with an optional link matrix."""
    return devices.DeviceSet(
        resource_name="nvidia.com/gpu",
        devices=tuple(devices.Device(id=f"GPU-{i}", numa_node=n) for i, n in enumerate(numa)),
        links=tuple(tuple(row) for row in links or ()),
    )


EIGHT = devices.synthetic("nvidia.com/gpu", count=8, numa_nodes=2)
# Four GPUs on one node in two NVLink pairs (0-1, 2-3) with weak links across.
PAIRS = server([0, 0, 0, 0], [[0, 4, 1, 1], [4, 0, 1, 1], [1, 1, 0, 4], [1, 1, 4, 0]])
# Three nodes of two GPUs; node 0 is better linked to node 2 than to node 1.
THREE_NODES = server(
    [0, 0, 1, 1, 2, 2],
    [
        [0, 3, 1, 1, 2, 2],
        [3, 0, 1, 1, 2, 2],
        [1, 1, 0, 3, 1, 1],
        [1, 1, 3, 0, 1, 1],
        [2, 2, 1, 1, 0, 3],
        [2, 2, 1, 1, 3, 0],
    ],
)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    device_set: devices.DeviceSet
    available: list[int]
    size: int
    expected: list[int]
    must_include: list[int] = dataclasses.field(default_factory=list)


CASES = [
    Case("both nodes fit: the lower one", EIGHT, list(range(8)), 2, [0, 1]),
    Case("only one node fits", EIGHT, [0, 4, 5, 6], 2, [4, 5]),
    Case("best fit: the node with fewest to spare", EIGHT, [0, 1, 2, 4, 5], 2, [4, 5]),
    Case("must-include pulls to its node", EIGHT, list(range(8)), 3, [6, 4, 5], must_include=[6]),
    Case("must-include on two nodes keeps both home", EIGHT, list(range(8)), 3, [1, 5, 0], must_include=[1, 5]),
    Case("must-include alone", EIGHT, list(range(8)), 2, [7, 3], must_include=[7, 3]),
    Case("links beat device order", PAIRS, [0, 1, 2, 3], 2, [2, 3], must_include=[2]),
    Case("no single node fits: spill to the best-linked node", THREE_NODES, list(range(6)), 3, [0, 1, 4]),
    Case("nothing asked", EIGHT, list(range(8)), 0, []),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_preferred(case: Case) -> None:
    request = allocation.Request(
        available=tuple(f"GPU-{i}" for i in case.available),
        must_include=tuple(f"GPU-{i}" for i in case.must_include),
        size=case.size,
    )
    assert allocation.preferred(case.device_set, request) == [f"GPU-{i}" for i in case.expected]


def test_bad_request_lists_every_problem() -> None:
    request = allocation.Request(available=("GPU-0", "GPU-9"), must_include=("GPU-1", "GPU-2", "GPU-3"), size=2)
    with pytest.raises(allocation.AllocationError) as raised:
        allocation.preferred(EIGHT, request)
    assert str(raised.value) == (
        "unknown device ids ['GPU-9'] for nvidia.com/gpu (known: "
        "['GPU-0', 'GPU-1', 'GPU-2', 'GPU-3', 'GPU-4', 'GPU-5', 'GPU-6', 'GPU-7']); "
        "must_include_deviceIDs ['GPU-1', 'GPU-2', 'GPU-3'] are not in available_deviceIDs; "
        "allocation_size 2 is smaller than the 3 must-include devices"
    )


def test_synthetic_spreads_devices_in_contiguous_blocks() -> None:
    assert [d.numa_node for d in EIGHT.devices] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [d.id for d in EIGHT.devices] == [f"GPU-{i}" for i in range(8)]
    assert [d.numa_node for d in devices.synthetic("nvidia.com/gpu", 5, 4).devices] == [0, 0, 1, 2, 3]
    assert devices.synthetic("huawei.com/Ascend910", 2).devices[1].id == "Ascend910-1"
    assert EIGHT.link(0, 3) > EIGHT.link(0, 4)


def test_synthetic_refuses_more_numa_nodes_than_devices() -> None:
    with pytest.raises(devices.DeviceSetError, match=r"numa_nodes: expected at most count \(2\) NUMA nodes"):
        devices.synthetic("nvidia.com/gpu", count=2, numa_nodes=3)


def test_device_set_reports_every_problem() -> None:
    with pytest.raises(devices.DeviceSetError) as raised:
        devices.DeviceSet(
            resource_name="gpu",
            devices=(devices.Device("GPU-0", 0), devices.Device("GPU-0", -1), devices.Device("a,b", 0)),
            links=((0, 1, 0), (2, 0, 0), (0, 0, 0)),
        )
    assert raised.value.problems == [
        "resource_name: expected a domain-prefixed extended resource name such as nvidia.com/gpu, got 'gpu'",
        "devices[1].id: 'GPU-0' appears more than once; device ids must be unique",
        "devices[1].numa_node: expected an integer >= 0, got -1",
        "devices[2].id: expected 1 to 63 characters without spaces or commas, got 'a,b'",
        "links[0][1]: expected the same score as links[1][0] (2), got 1",
    ]


def test_device_set_refuses_a_matrix_of_the_wrong_shape() -> None:
    with pytest.raises(devices.DeviceSetError, match=r"links: expected a 2x2 matrix \(one row and column per device\), got 1 rows"):
        server([0, 1], [[0, 1]])


@pytest.mark.parametrize(
    ("resource", "env"),
    [
        ("nvidia.com/gpu", "NVIDIA_VISIBLE_DEVICES"),
        ("huawei.com/Ascend910", "ASCEND_VISIBLE_DEVICES"),
        ("huawei.com/Ascend310P", "ASCEND_VISIBLE_DEVICES"),
        ("metax-tech.com/gpu", "METAX_VISIBLE_DEVICES"),
        ("example.com/fpga", "VISIBLE_DEVICES"),
    ],
)
def test_visible_devices_env_per_vendor(resource: str, env: str) -> None:
    assert vendors.visible_devices_env(resource) == env
