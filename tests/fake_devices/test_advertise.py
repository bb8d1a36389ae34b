"""What a profile advertises: one node's whole output pinned by golden data, and the facts the
other built-in profiles must carry (supernode labels, unhealthy GPUs left out of allocatable)."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import jsonschema
import pytest
import yaml

from fake_devices import advertise, profile

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = profile.PROFILES_DIR / "testdata"
CRDS = REPO / "reference_scheduler" / "crds"


def dump(docs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False, width=10_000)


@pytest.mark.parametrize("name", ["gpu-server-8x2numa"])
def test_advertised_objects_match_the_golden_output(name: str, request: pytest.FixtureRequest) -> None:
    """profiles/testdata/<name>.output.yaml is exactly what the profile advertises; rewrite it with
    `pytest tests/fake_devices/test_advertise.py --update-golden` after a deliberate change, and read the diff."""
    got = dump(advertise.render(profile.builtin(name)))
    path = GOLDEN / f"{name}.output.yaml"
    if request.config.getoption("--update-golden"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(got)
    assert got == path.read_text(), f"{path} is stale; rerun with --update-golden and review the diff"


def test_the_gpu_server_node_carries_every_documented_fact() -> None:
    prof = profile.builtin("gpu-server-8x2numa")
    advert = advertise.node(prof, prof.node("gpu-server-0"))
    assert advert.capacity == {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": "8"}
    assert advert.allocatable == {"cpu": "62", "memory": "504Gi", "pods": "110", "nvidia.com/gpu": "8"}
    assert advert.labels[advertise.NVIDIA_PRODUCT_LABEL] == advert.labels[advertise.GPU_MODEL_LABEL] == "Tesla-V100-SXM2-32GB"
    assert advert.labels[advertise.GPU_MEMORY_LABEL] == "32768" and advert.labels[advertise.NUMA_NODES_LABEL] == "2"
    assert advert.labels["volcano.sh/hypernode"] == "rack-0" and advertise.SUPERNODE_LABEL not in advert.labels
    gpus = json.loads(advert.annotations[advertise.GPU_TOPOLOGY_ANNOTATION])["gpus"]
    assert [g["numa"] for g in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert gpus[0]["links"] == {"GPU-1": 1, "GPU-2": 1, "GPU-3": 2, "GPU-4": 2}  # no link to GPU-5..7
    numa = json.loads(advert.annotations[advertise.NUMA_TOPOLOGY_ANNOTATION])["numaNodes"]
    assert numa[1] == {"id": 1, "cpus": "32-63", "cpuCount": 32, "memory": "256Gi", "gpus": ["GPU-4", "GPU-5", "GPU-6", "GPU-7"]}


def test_supernode_nodes_are_labelled_with_their_supernode_and_tiers() -> None:
    prof = profile.builtin("supernodes-4x8")
    labels = {n.name: advertise.node(prof, n).labels for n in prof.nodes}
    assert [labels[f"snode-{i}"][advertise.SUPERNODE_LABEL] for i in range(12)] == [f"supernode-{i // 4}" for i in range(12)]
    assert labels["snode-5"]["volcano.sh/hypernode"] == "supernode-1" and labels["snode-5"]["volcano.sh/hypercluster"] == "cluster-0"
    assert labels["snode-0"][advertise.GPU_MODEL_LABEL] == "MXC500"
    assert not any(k.startswith("nvidia.com/") for k in labels["snode-0"]), "NVIDIA's feature-discovery labels are for nvidia.com/gpu only"
    hypernodes = {o["metadata"]["name"]: o["spec"] for o in advertise.objects(prof) if o["kind"] == "HyperNode"}
    assert hypernodes["cluster-0"] == {
        "tier": 2,
        "tierName": "cluster",
        "members": [{"type": "HyperNode", "selector": {"exactMatch": {"name": f"supernode-{i}"}}} for i in range(3)],
    }
    assert [m["selector"]["exactMatch"]["name"] for m in hypernodes["supernode-2"]["members"]] == ["snode-8", "snode-9", "snode-10", "snode-11"]
    assert {m["type"] for m in hypernodes["supernode-2"]["members"]} == {"Node"}


def test_unhealthy_gpus_stay_in_capacity_but_leave_allocatable() -> None:
    prof = profile.builtin("fragmented")
    adverts = {n.name: advertise.node(prof, n) for n in prof.nodes}
    free = {name: a.allocatable.get("nvidia.com/gpu") for name, a in adverts.items()}
    assert free == {"frag-full-0": "8", "frag-half-0": "4", "frag-most-0": "2", "frag-t4-0": "4", "frag-t4-1": "4", "frag-cpu-0": None}
    assert adverts["frag-most-0"].capacity["nvidia.com/gpu"] == "8"
    topology = json.loads(adverts["frag-half-0"].annotations[advertise.GPU_TOPOLOGY_ANNOTATION])
    assert [g["id"] for g in topology["gpus"] if g["healthy"]] == ["GPU-0", "GPU-3", "GPU-4", "GPU-7"]
    assert advertise.GPU_TOPOLOGY_ANNOTATION not in adverts["frag-cpu-0"].annotations
    assert advertise.GPU_COUNT_LABEL not in adverts["frag-cpu-0"].labels


def test_numatopology_is_shaped_as_the_resource_exporter_writes_it() -> None:
    prof = profile.builtin("gpu-server-8x2numa")
    spec = advertise.numatopology(prof, prof.nodes[0])["spec"]
    assert spec["policies"] == {"CPUManagerPolicy": "static", "TopologyManagerPolicy": "best-effort"}
    assert spec["resReserved"] == {"cpu": "2", "memory": "8Gi"}
    assert spec["numares"] == {"cpu": {"allocatable": "2-63", "capacity": 64}}  # the reserved CPUs are the lowest
    assert spec["cpuDetail"]["31"] == {"numa": 0, "socket": 0, "core": 31} and spec["cpuDetail"]["32"]["numa"] == 1
    plain = profile.builtin("supernodes-4x8")
    assert "resReserved" not in advertise.numatopology(plain, plain.nodes[0])["spec"]


def _crd_schema(file: str) -> dict[str, Any]:
    crd = yaml.safe_load((CRDS / file).read_text())
    return dict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


@pytest.mark.parametrize("name", profile.builtin_names())
def test_every_object_fits_the_crd_the_reference_installs(name: str) -> None:
    """The API server would prune or refuse a field its CRD does not have: check against them."""
    schemas = {"Numatopology": _crd_schema("nodeinfo.volcano.sh_numatopologies.yaml"), "HyperNode": _crd_schema("topology.volcano.sh_hypernodes.yaml")}
    for obj in advertise.objects(profile.builtin(name)):
        jsonschema.validate(obj, schemas[obj["kind"]])
        assert _only_known_fields(obj["spec"], schemas[obj["kind"]]["properties"]["spec"]), obj


def _only_known_fields(value: Any, schema: dict[str, Any]) -> bool:
    if isinstance(value, dict):
        if "properties" in schema:
            return all(k in schema["properties"] and _only_known_fields(v, schema["properties"][k]) for k, v in value.items())
        extra = schema.get("additionalProperties")
        return all(_only_known_fields(v, extra) for v in value.values()) if isinstance(extra, dict) else bool(schema.get("x-kubernetes-preserve-unknown-fields") or extra)
    if isinstance(value, list):
        return all(_only_known_fields(v, schema.get("items") or {}) for v in value)
    return True


def test_cpuset_is_the_linux_list_format() -> None:
    assert advertise.cpuset([3, 0, 1, 2, 8, 10, 11]) == "0-3,8,10-11"
    assert advertise.cpuset([5]) == "5" and advertise.cpuset([]) == ""


def test_advertised_keys_are_recognised_so_stale_ones_can_be_removed() -> None:
    assert advertise.is_advertised(advertise.SUPERNODE_LABEL) and advertise.is_advertised("volcano.sh/hypercluster")
    assert advertise.is_advertised(advertise.NVIDIA_PRODUCT_LABEL)
    assert not advertise.is_advertised("kubernetes.io/hostname") and not advertise.is_advertised("nvidia.com/gpu")


def test_the_command_prints_every_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert advertise.main(["supernodes-4x8"]) == 0
    kinds = [d["kind"] for d in yaml.safe_load_all(capsys.readouterr().out)]
    assert kinds == ["Node"] * 12 + ["Numatopology"] * 12 + ["HyperNode"] * 4
    assert advertise.main(["no-such-profile"]) == 2
    assert "no built-in profile named 'no-such-profile'" in capsys.readouterr().err


def test_vgpu_gpus_are_advertised_as_volcanos_vgpu_device_plugin_does() -> None:
    doc = {"name": "vg", "nodes": [{"prefix": "vgpu", "cpu": 8, "memory": "32Gi", "gpus": {
        "resource": "nvidia.com/gpu", "model": "Tesla-T4", "memory": "16Gi", "count": 3, "unhealthy": [2], "vgpu": {"split": 4}}}]}
    prof = profile.from_document(doc)
    advert = advertise.node(prof, prof.nodes[0])
    # vGPUs and their memory (MiB) in place of whole GPUs; an unhealthy GPU leaves allocatable.
    assert "nvidia.com/gpu" not in advert.capacity
    assert (advert.capacity[advertise.VGPU_NUMBER], advert.allocatable[advertise.VGPU_NUMBER]) == ("12", "8")
    assert (advert.capacity[advertise.VGPU_MEMORY], advert.allocatable[advertise.VGPU_MEMORY]) == ("49152", "32768")
    assert advert.annotations[advertise.VGPU_REGISTER_ANNOTATION] == (
        "GPU-0,4,16384,NVIDIA-Tesla-T4,true,hami-core:GPU-1,4,16384,NVIDIA-Tesla-T4,true,hami-core:GPU-2,4,16384,NVIDIA-Tesla-T4,false,hami-core:"
    )
    assert advert.annotations[advertise.VGPU_HANDSHAKE_ANNOTATION].startswith("Reported ")
    assert advertise.is_advertised(advertise.VGPU_REGISTER_ANNOTATION) and advertise.is_advertised(advertise.VGPU_HANDSHAKE_ANNOTATION)
