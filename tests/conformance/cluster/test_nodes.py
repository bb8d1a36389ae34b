"""Node specs: the `--nodes` grammar, its errors, and the kwok Node manifests made from it."""

from __future__ import annotations

import pytest

from conformance.cluster import nodes


def test_default_spec_is_four_large_nodes() -> None:
    groups = nodes.parse(None)
    assert groups == (nodes.NodeGroup(count=4),)
    assert nodes.node_names(groups) == ["vck-node-0", "vck-node-1", "vck-node-2", "vck-node-3"]


def test_groups_with_every_key() -> None:
    groups = nodes.parse("2:cpu=8,memory=32Gi,pods=20;1:prefix=gpu,nvidia.com/gpu=8,label:zone=b,taint:dedicated=gpu:NoSchedule,taint:spot:PreferNoSchedule")
    assert groups[0] == nodes.NodeGroup(count=2, cpu="8", memory="32Gi", pods=20)
    gpu = groups[1]
    assert gpu.prefix == "gpu" and gpu.extended == (("nvidia.com/gpu", "8"),)
    assert gpu.labels == (("zone", "b"),)
    assert gpu.taints == (nodes.Taint("dedicated", "gpu", "NoSchedule"), nodes.Taint("spot", "", "PreferNoSchedule"))
    assert nodes.node_names(groups) == ["vck-node-0", "vck-node-1", "gpu-0"]


def test_a_group_without_a_count_is_one_node() -> None:
    assert nodes.parse("cpu=4")[0].count == 1


def test_names_count_on_across_groups_with_the_same_prefix() -> None:
    assert nodes.node_names(nodes.parse("1;2:cpu=1")) == ["vck-node-0", "vck-node-1", "vck-node-2"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("2:cpu=lots", "cpu='lots' is not a Kubernetes quantity"),
        ("2:gpus=8", "unknown key 'gpus'"),
        ("2:pods=ten", "pods='ten' should be a whole number"),
        ("2:taint:a=b:Sometimes", "EFFECT one of NoSchedule"),
        ("2:prefix=Big_Name", "DNS-1123"),
        ("2:cpu", "'cpu' should be key=value"),
        ("0", "at least 1"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(nodes.NodeSpecError) as err:
        nodes.parse(spec)
    assert message in str(err.value)
    assert spec.split(";")[0] in str(err.value)


def test_kwok_manifest_carries_resources_labels_taints_and_the_kwok_annotation() -> None:
    [manifest] = nodes.kwok_nodes(nodes.parse("1:cpu=16,memory=64Gi,nvidia.com/gpu=4,label:gpu=yes,taint:gpu=true:NoSchedule"))
    assert manifest["metadata"]["annotations"][nodes.KWOK_NODE_ANNOTATION] == "fake"
    assert manifest["metadata"]["labels"]["gpu"] == "yes"
    assert manifest["metadata"]["labels"]["kubernetes.io/hostname"] == "vck-node-0"
    assert manifest["status"]["allocatable"] == {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"}
    assert manifest["status"]["capacity"] == manifest["status"]["allocatable"]
    assert manifest["spec"]["taints"] == [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    assert manifest["status"]["addresses"][0] == {"type": "InternalIP", "address": "10.200.0.1"}


def test_a_node_is_ready_once_the_lifecycle_controller_has_seen_it_ready() -> None:
    """The node lifecycle controller's not-ready taint outlives the Ready condition for a moment:
    until it is gone, a scheduler honouring taints would leave the node empty."""
    from conformance.cluster import kube

    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert kube.node_ready(ready)
    assert not kube.node_ready({**ready, "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}})
    assert not kube.node_ready({**ready, "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]}})
    assert kube.node_ready({**ready, "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]}})
    assert not kube.node_ready({"status": {"conditions": [{"type": "Ready", "status": "False"}]}})
