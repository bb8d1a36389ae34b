"""A scenario's `cluster.profile`: named or inline, checked with the scenario file's lines, and
turned into the kwok nodes and objects the runner applies (no cluster needed here)."""

from __future__ import annotations

import io
import json
import pathlib
import subprocess
import sys

import pytest

from conformance.cluster import nodes, profile_nodes
from conformance.scenario import loader
from fake_devices import advertise

REPO = pathlib.Path(__file__).resolve().parents[3]
HEAD = """id: profile-case
suite: devices
title: t
level: MUST
cites: [{source: pkg/x.go}]
steps: [{wait: {pods: {count: 0}}}]
"""


def load(cluster: str) -> loader.models.Scenario:
    return loader.load_stream(io.StringIO(HEAD + cluster), "case.yaml")


def problems(cluster: str) -> list[loader.Problem]:
    with pytest.raises(loader.ScenarioError) as err:
        load(cluster)
    return list(err.value.problems)


def test_a_named_profile_is_the_whole_cluster() -> None:
    sc = load("cluster: {profile: gpu-server-8x2numa}\n")
    assert sc.profile is not None and sc.profile.name == "gpu-server-8x2numa"
    assert sc.nodes == ()
    assert [m["metadata"]["name"] for m in profile_nodes.node_manifests(sc.nodes, sc.profile)] == ["gpu-server-0"]


def test_without_a_profile_the_default_nodes_stay() -> None:
    sc = load("")
    assert sc.profile is None and sc.nodes == nodes.parse(None)


def test_an_inline_profile_sits_beside_plain_nodes() -> None:
    sc = load("""cluster:
  nodes: [{count: 2, cpu: '4'}]
  profile:
    name: one-gpu-box
    nodes: [{prefix: box, gpus: {resource: metax-tech.com/gpu, count: 2}}]
""")
    manifests = profile_nodes.node_manifests(sc.nodes, sc.profile)
    assert [m["metadata"]["name"] for m in manifests] == ["vck-node-0", "vck-node-1", "box-0"]
    box = manifests[2]
    assert box["metadata"]["annotations"][nodes.KWOK_NODE_ANNOTATION] == "fake"
    assert box["status"]["allocatable"]["metax-tech.com/gpu"] == "2"
    assert box["status"]["addresses"][0]["address"] == nodes.node_ip(2)  # numbered on after the plain nodes
    assert json.loads(box["metadata"]["annotations"][advertise.GPU_TOPOLOGY_ANNOTATION])["resource"] == "metax-tech.com/gpu"


def test_every_inline_profile_problem_is_reported_at_the_scenario_line() -> None:
    found = problems("""cluster:
  profile:
    name: bad
    nodes:
    - prefix: box
      numa: [{cpus: 4, memory: 8Gi}]
      gpus:
        resource: nvidia.com/gpu
        count: 2
        numa: [0, 3]
        unhealthy: [2]
""")
    assert [(p.line, p.path) for p in found] == [(16, "cluster.profile.nodes[0].gpus.numa[1]"), (17, "cluster.profile.nodes[0].gpus.unhealthy[0]")]
    assert "expected a NUMA node of this server (0 to 0), got 3" in found[0].message
    assert str(found[1]).startswith("case.yaml:17: cluster.profile.nodes[0].gpus.unhealthy[0]: expected a GPU index from 0 to 1, got 2")


def test_an_unknown_profile_name_lists_the_built_in_ones() -> None:
    [problem] = problems("cluster: {profile: dgx-h100}\n")
    assert (problem.line, problem.path) == (7, "cluster.profile")
    assert "no built-in profile named 'dgx-h100'; expected one of: fragmented, gpu-server-8x2numa, supernodes-4x8" in problem.message


def test_profile_nodes_may_not_take_a_plain_node_name() -> None:
    [problem] = problems("cluster:\n  nodes: [{prefix: gpu-server}]\n  profile: gpu-server-8x2numa\n")
    assert problem.path == "cluster.profile" and "gpu-server-0, which cluster.nodes names too" in problem.message


def test_profile_problems_are_reported_with_the_other_schema_problems() -> None:
    found = problems("cluster: {profile: {name: x, nodes: [{prefix: p, gpus: {resource: nvidia.com/gpu, count: 1, numa: [0, 0]}}]}}\ntimeouts: {default_within: soon}\n")
    assert {p.path for p in found} == {"cluster.profile.nodes[0].gpus.numa", "timeouts.default_within"}


def test_vck_validate_names_the_file_and_the_path(tmp_path: pathlib.Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_text(HEAD + "cluster: {profile: {name: x, nodes: [{prefix: p, pods: 0}]}}\n")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(case)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert f"{case}:7: cluster.profile.nodes[0].pods: expected a number >= 1, got 0" in proc.stdout + proc.stderr


def test_a_node_showing_an_earlier_profile_is_not_the_same_node() -> None:
    sc = load("cluster: {profile: supernodes-4x8}\n")
    [want] = [m for m in profile_nodes.node_manifests(sc.nodes, sc.profile) if m["metadata"]["name"] == "snode-0"]
    current = json.loads(json.dumps(want))
    assert profile_nodes.same_node(current, want)
    # Wanted now: the same node without the profile's facts (labels, annotations).
    plain = json.loads(json.dumps(want))
    for part in ("labels", "annotations"):
        plain["metadata"][part] = {k: v for k, v in plain["metadata"][part].items() if not advertise.is_advertised(k)}
    assert not profile_nodes.same_node(current, plain), "a stale supernode label and GPU topology must force a new node"
    assert profile_nodes.same_node(plain, plain)
    current["status"]["capacity"]["metax-tech.com/gpu"] = "4"
    assert not profile_nodes.same_node(current, want)
