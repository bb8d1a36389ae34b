"""A device profile on a real embedded cluster: a scenario on gpu-server-8x2numa runs (8 GPUs
taken, the next GPU job waits), the Node, Numatopology and HyperNode objects are there as
fake_devices advertises them, and reshaping to plain nodes removes them."""

from __future__ import annotations

import io

import pytest

from conformance import results
from conformance.cluster import profile_nodes, resources
from conformance.runner import context, scenario_run
from conformance.scenario import loader
from fake_devices import advertise

pytestmark = pytest.mark.cluster
NODE, NUMATOPOLOGY, HYPERNODE = (resources.lookup(k) for k in ("Node", "Numatopology", "HyperNode"))
JOB = """
- apply:
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {{name: {name}}}
    spec:
      schedulerName: volcano
      minAvailable: 1
      tasks:
      - name: main
        replicas: 1
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: busybox
              resources:
                limits: {{nvidia.com/gpu: {gpus}}}
"""
SCENARIO = (
    """id: e2e-gpu-server-profile
suite: devices
title: eight GPUs taken, the next GPU job waits
level: MUST
cites: [{source: pkg/scheduler/actions/allocate/allocate.go}]
requires: [device:gpu]
cluster: {profile: gpu-server-8x2numa}
steps:"""
    + JOB.format(name="eight", gpus=8)
    + """- wait: {pods: {select: {job: eight, node: gpu-server-0}, phase: Running, count: 1}}"""
    + JOB.format(name="one-more", gpus=1)
    + """expect:
- pods: {select: {job: one-more}, bound: true, count: {min: 1}}
  never: 5s
"""
)


def test_a_profile_scenario_runs_and_its_objects_are_as_advertised(vck_context: context.RunContext) -> None:
    sc = loader.load_stream(io.StringIO(SCENARIO), "e2e-gpu-server-profile.yaml")
    assert sc.profile is not None
    result = scenario_run.run(sc, vck_context)
    assert result.status is results.Status.PASSED, result.reason

    client, prof = vck_context.client, sc.profile
    advert = advertise.node(prof, prof.node("gpu-server-0"))
    node = client.get(NODE, "gpu-server-0", None)
    assert advert.labels.items() <= node["metadata"]["labels"].items()
    assert advert.annotations.items() <= node["metadata"]["annotations"].items()
    assert node["status"]["allocatable"] == advert.allocatable
    assert advert.capacity.items() <= node["status"]["capacity"].items()
    numa = client.get(NUMATOPOLOGY, "gpu-server-0", None)
    assert numa["spec"] == advertise.numatopology(prof, prof.nodes[0])["spec"]
    assert numa["metadata"]["labels"][advertise.MANAGED_BY_LABEL] == advertise.MANAGED_BY
    assert_kept_as_is(vck_context, sc)
    rack = client.get(HYPERNODE, "rack-0", None)
    assert rack["spec"] == {"tier": 1, "tierName": "rack", "members": [{"type": "Node", "selector": {"exactMatch": {"name": "gpu-server-0"}}}]}

    # The next scenario has plain nodes: the profile's node and objects must go.
    plain = loader.load_stream(io.StringIO(SCENARIO.replace("cluster: {profile: gpu-server-8x2numa}", "cluster: {nodes: [{count: 1, cpu: '4'}]}")), "plain.yaml")
    vck_context.prepare_nodes(plain.nodes, plain.profile)
    vck_context.prepare_devices(plain.profile)
    names = [n.metadata.name for n in client.core.list_node().items]
    assert "gpu-server-0" not in names and "vck-node-0" in names
    for kind in (NUMATOPOLOGY, HYPERNODE):
        assert client.lister(kind, None)(label_selector=profile_nodes.MANAGED)["items"] == []
    assert_kept_as_is(vck_context, plain)


def assert_kept_as_is(ctx: context.RunContext, sc: loader.models.Scenario) -> None:
    """Each node, read back from the API server, counts as the one wanted: the next scenario with
    the same cluster keeps it instead of replacing it (quantities are written as the server
    writes them back)."""
    wanted = {m["metadata"]["name"]: m for m in profile_nodes.node_manifests(sc.nodes, sc.profile)}
    current = {n.metadata.name: ctx.api.sanitize_for_serialization(n) for n in ctx.client.core.list_node().items}
    assert set(wanted) <= set(current)
    for name, want in wanted.items():
        assert profile_nodes.same_node(current[name], want), (current[name]["status"], want["status"])
