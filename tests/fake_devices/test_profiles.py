"""Device profiles: the built-in three load with the documented shape, every problem in a bad
profile is reported at its line, and a profile node becomes the device set a plugin serves."""

from __future__ import annotations

import io
import pathlib
from typing import Any

import pytest

from fake_devices import profile, profile_check, quantity
from fake_devices.deviceplugin import devices

DATA = pathlib.Path(__file__).parent / "data"

# (line, path, a phrase of the message): every problem in data/many-problems.yaml.
MANY_PROBLEMS = [
    (1, "name", "expected a DNS-1123 label"),
    (5, "nodes[0].cpu", "give either numa (CPUs and memory per NUMA node) or cpu and memory"),
    (9, "nodes[1].reserved.cpu", "expected fewer than the node's 32 CPUs, got 64"),
    (13, "nodes[1].gpus.numa", "expected one NUMA node per GPU (4 entries), got 3"),
    (13, "nodes[1].gpus.numa[2]", "expected a NUMA node of this server (0 to 0), got 1"),
    (14, "nodes[1].gpus.links[1]", "expected 4 scores (one per GPU), got 3"),
    (15, "nodes[1].gpus.unhealthy[0]", "expected a GPU index from 0 to 3, got 4"),
    (15, "nodes[1].gpus.unhealthy[2]", "GPU 1 is listed twice"),
    (16, "nodes[1].gpus.memory", 'expected a Kubernetes quantity such as 64, 500m or 80Gi, got "lots"'),
    (17, "nodes[1].gpus.color", "unknown key 'color'; expected one of: count, idPrefix, links"),
    (22, "nodes[2].gpus.links[0][1]", "expected the same score as links[1][0] (2)"),
    (26, "tiers[0].hyperNodes[0].members[1]", "expected a node of this profile, got 'nope'"),
    (27, "tiers[0].hyperNodes[1].members[0]", "'c-0' is already a member of HyperNode 's0'"),
    (28, "tiers[1].tier", "expected 2 (tiers count up from 1"),
    (31, "supernodeTier", "expected one of the profile's tiers (1 to 2), got 4"),
]


def test_every_problem_in_a_file_is_reported_at_its_line() -> None:
    path = DATA / "many-problems.yaml"
    with pytest.raises(profile.ProfileError) as err:
        profile.load_file(path)
    found = sorted((p.line, p.path, p.message) for p in err.value.problems)
    assert [(line, where) for line, where, _ in found] == sorted((line, where) for line, where, _ in MANY_PROBLEMS)
    for (_, _, message), (_, _, phrase) in zip(found, sorted(MANY_PROBLEMS), strict=True):
        assert phrase in message
    assert str(err.value).splitlines()[0].startswith(f"{path}:")
    assert all(str(p).startswith(f"{path}:{p.line}: {p.path}: ") for p in err.value.problems)


def _doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": "one", "nodes": [{"prefix": "n", "cpu": 8, "memory": "32Gi", "gpus": {"resource": "nvidia.com/gpu", "count": 2}}]}
    for key, value in changes.items():
        target = doc["nodes"][0]["gpus"] if key.startswith("gpus_") else doc["nodes"][0] if key.startswith("node_") else doc
        target[key.split("_", 1)[1] if "_" in key else key] = value
    return doc


@pytest.mark.parametrize(
    ("changes", "path", "phrase"),
    [
        ({"gpus_resource": "gpu"}, "nodes[0].gpus.resource", "expected a domain-prefixed extended resource name such as nvidia.com/gpu"),
        ({"gpus_count": "two"}, "nodes[0].gpus.count", 'expected an integer >= 1, got "two"'),
        ({"gpus_links": {"sameNuma": 2}}, "nodes[0].gpus.links", "expected a count x count matrix of link scores, or {sameNuma: N, crossNuma: M}"),
        ({"gpus_model": "A100 80GB"}, "nodes[0].gpus.model", "expected a label value"),
        ({"gpus_memory": "512Ki"}, "nodes[0].gpus.memory", "expected at least 1Mi of GPU memory"),
        ({"gpus_vgpu": {"split": 4}}, "nodes[0].gpus.vgpu", "give the GPUs a memory"),
        ({"node_kubelet": {"topologyManagerPolicy": "strict"}}, "nodes[0].kubelet.topologyManagerPolicy", "expected one of none, best-effort, restricted, single-numa-node"),
        ({"node_reserved": {"memory": "64Gi"}}, "nodes[0].reserved.memory", "expected less than the node's 32Gi of memory"),
        ({"node_prefix": "n" * 62}, "nodes[0].prefix", "node names of at most 63 characters"),
        ({"tiers": [{"tier": 1, "size": 1, "hyperNodes": [{"name": "h", "members": ["n-0"]}]}]}, "tiers[0].size", "not both"),
        ({"tiers": [{"tier": 1, "prefix": "Rack"}]}, "tiers[0].prefix", "expected a DNS-1123 label"),
        ({"supernodeTier": 1}, "supernodeTier", "expected a tier, but the profile has no tiers"),
        ({"nodes": []}, "nodes", "expected at least 1 item"),
    ],
)
def test_one_problem_one_clear_message(changes: dict[str, Any], path: str, phrase: str) -> None:
    with pytest.raises(profile.ProfileError) as err:
        profile.from_document(_doc(**changes))
    [problem] = err.value.problems
    assert problem.path == path and phrase in problem.message, str(problem)


def test_yaml_that_is_not_a_profile_says_so() -> None:
    for text, phrase in [("name: [", "not valid YAML"), ("", "the file is empty"), ("- a\n", "expected a mapping with name and nodes, got list"), ("name: a\nname: b\nnodes: [{prefix: n}]\n", "duplicate key 'name'")]:
        with pytest.raises(profile.ProfileError) as err:
            profile.load_stream(io.StringIO(text), "x.yaml")
        assert phrase in str(err.value) and str(err.value).startswith("x.yaml"), (text, str(err.value))


def test_the_builtin_profiles_are_the_documented_three_and_named_as_their_files() -> None:
    assert profile.builtin_names() == ["fragmented", "gpu-server-8x2numa", "supernodes-4x8"]
    assert all(profile.builtin(name).name == name for name in profile.builtin_names())
    with pytest.raises(profile.ProfileError) as err:
        profile.builtin("dgx")
    assert "no built-in profile named 'dgx'; expected one of: fragmented, gpu-server-8x2numa, supernodes-4x8" in str(err.value)


def test_gpu_server_is_one_8_gpu_2_numa_server() -> None:
    prof = profile.builtin("gpu-server-8x2numa")
    [node] = prof.nodes
    assert node.name == "gpu-server-0" and node.cpus() == 64 and node.memory_bytes() == 512 * 2**30
    assert [len(n.cpus) for n in node.numa] == [32, 32] and node.numa[1].cpus[0] == 32
    assert (node.cpu_manager_policy, node.topology_manager_policy, node.reserved_cpus) == ("static", "best-effort", 2)
    assert node.gpus is not None and node.gpus.resource == "nvidia.com/gpu" and node.gpus.memory_bytes == 32 * 2**30
    assert [g.numa for g in node.gpus.devices] == [0, 0, 0, 0, 1, 1, 1, 1] and node.gpus.healthy() == 8
    assert all(node.gpus.links[i][j] == node.gpus.links[j][i] for i in range(8) for j in range(8))
    assert [(h.name, h.tier, h.members) for h in prof.hypernodes] == [("rack-0", 1, ("gpu-server-0",))]


def test_supernodes_are_three_of_four_8_gpu_nodes_under_one_tier_2_hypernode() -> None:
    prof = profile.builtin("supernodes-4x8")
    assert len(prof.nodes) == 12 and {n.gpus.resource for n in prof.nodes if n.gpus} == {"metax-tech.com/gpu"}
    assert sum(n.gpus.healthy() for n in prof.nodes if n.gpus) == 96
    tier1 = [h for h in prof.hypernodes if h.tier == 1]
    assert [(h.name, len(h.members), h.member_type) for h in tier1] == [(f"supernode-{i}", 4, "Node") for i in range(3)]
    [top] = [h for h in prof.hypernodes if h.tier == 2]
    assert top.members == ("supernode-0", "supernode-1", "supernode-2") and top.member_type == "HyperNode"
    assert prof.supernode_of("snode-7") == "supernode-1"
    assert prof.hypernodes_of("snode-11") == {1: "supernode-2", 2: "cluster-0"}
    # Default links: 2 on a NUMA node, 1 across; default GPU placement: contiguous blocks.
    gpus = prof.nodes[0].gpus
    assert gpus is not None and [g.numa for g in gpus.devices] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert gpus.links[0][1] == 2 and gpus.links[0][4] == 1 and gpus.links[0][0] == 0


def test_fragmented_mixes_whole_partly_used_small_and_gpu_less_nodes() -> None:
    prof = profile.builtin("fragmented")
    free = {n.name: (n.gpus.healthy(), len(n.gpus.devices), n.gpus.model) if n.gpus else None for n in prof.nodes}
    assert free == {
        "frag-full-0": (8, 8, "NVIDIA-A100-SXM4-80GB"),
        "frag-half-0": (4, 8, "NVIDIA-A100-SXM4-80GB"),
        "frag-most-0": (2, 8, "NVIDIA-A100-SXM4-80GB"),
        "frag-t4-0": (4, 4, "Tesla-T4"),
        "frag-t4-1": (4, 4, "Tesla-T4"),
        "frag-cpu-0": None,
    }
    assert prof.hypernodes == () and prof.supernode_of("frag-full-0") is None


def test_a_profile_node_becomes_the_device_set_a_plugin_serves() -> None:
    node = profile.builtin("fragmented").node("frag-half-0")
    device_set = profile.device_set(node)
    assert device_set.resource_name == "nvidia.com/gpu"
    assert device_set.devices[:3] == (devices.Device("GPU-0", 0, True), devices.Device("GPU-1", 0, False), devices.Device("GPU-2", 0, False))
    assert [d.numa_node for d in device_set.devices] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert device_set.link(0, 3) == 2 and device_set.link(0, 4) == 1
    ascend = profile.from_document({"name": "npu", "nodes": [{"prefix": "npu", "gpus": {"resource": "huawei.com/Ascend910", "count": 2}}]})
    assert [d.id for d in profile.device_set(ascend.nodes[0]).devices] == ["Ascend910-0", "Ascend910-1"]
    with pytest.raises(ValueError, match="frag-cpu-0 has no GPUs"):
        profile.device_set(profile.builtin("fragmented").node("frag-cpu-0"))


def test_groups_with_one_prefix_number_on_and_explicit_tiers_name_their_members() -> None:
    prof = profile.from_document({
        "name": "two-racks",
        "nodes": [{"prefix": "n", "count": 2}, {"prefix": "n", "count": 1, "gpus": {"resource": "nvidia.com/gpu", "count": 1}}],
        "tiers": [{"tier": 1, "hyperNodes": [{"name": "left", "members": ["n-0", "n-1"]}, {"name": "right", "members": ["n-2"]}]}],
        "supernodeTier": 1,
    })
    assert [n.name for n in prof.nodes] == ["n-0", "n-1", "n-2"] and prof.nodes[2].gpus is not None
    assert [prof.supernode_of(n.name) for n in prof.nodes] == ["left", "left", "right"]


def test_quantities_are_written_as_the_api_server_writes_them_back() -> None:
    assert quantity.format_bytes(512 * 2**30) == "512Gi" and quantity.format_bytes(1536 * 2**20) == "1536Mi"
    assert quantity.format_bytes(2_000_000) == "2M" and quantity.format_bytes(1500) == "1500"
    assert quantity.bytes_of("1.5Gi") == 1536 * 2**20 and quantity.bytes_of(64) == 64
    with pytest.raises(quantity.QuantityError, match="expected a Kubernetes quantity"):
        quantity.parse("lots")
    # The schema accepts exactly what the parser reads.
    assert profile_check.schema()["$defs"]["quantity"]["pattern"] == quantity.PATTERN_TEXT
