"""`cluster: {real_nodes: N}`: a scenario whose pods run in containers on nodes the backend lends.
It has no simulated node, and a backend that lends fewer is told apart from one that fails."""

from __future__ import annotations

import io
import pathlib

import pytest

from conformance import config as run_config
from conformance.api.run import raise_kind_workers
from conformance.runner import scenario_run
from conformance.scenario import loader

HEAD = """id: real-case
suite: real
title: t
level: MUST
cites: [{source: pkg/x.go}]
steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
expect:
  - {describe: there, object: {object: {kind: ConfigMap, name: c}, fields: {metadata.name: c}}, within: 5s}
"""


def load(cluster: str) -> loader.models.Scenario:
    return loader.load_stream(io.StringIO(HEAD + cluster), "case.yaml")


def errors(cluster: str) -> list[str]:
    with pytest.raises(loader.ScenarioError) as err:
        load(cluster)
    return [str(p) for p in err.value.problems if p.is_error]


def test_real_nodes_mean_no_simulated_node() -> None:
    sc = load("cluster: {real_nodes: 2}\n")
    assert sc.real_nodes == 2 and sc.nodes == () and sc.profile is None
    # Without real_nodes nothing changes: no cluster is the four default nodes.
    plain = load("")
    assert plain.real_nodes == 0 and len(plain.nodes) == 1 and plain.nodes[0].count == 4


def test_simulated_nodes_beside_real_ones_are_refused_with_their_line() -> None:
    found = errors("cluster:\n  real_nodes: 1\n  nodes: [{count: 1}]\n")
    assert len(found) == 1 and "case.yaml:12: cluster.nodes:" in found[0] and "expected no simulated nodes beside real_nodes" in found[0], found
    found = errors("cluster:\n  real_nodes: 1\n  profile: fragmented\n")
    assert len(found) == 1 and "expected no device profile beside real_nodes" in found[0], found
    assert any("minimum" in p or "at least" in p or ">= 1" in p or "less than" in p for p in errors("cluster: {real_nodes: 0}\n")), errors("cluster: {real_nodes: 0}\n")


@pytest.mark.parametrize(
    ("backend", "capacity", "said"),
    [
        ("embedded", 0, "needs 2 nodes that run containers; the embedded backend lends none (its nodes are simulated); run it with --backend kind"),
        ("existing", 0, "needs 2 nodes that run containers; the existing backend lends none; lend it 2 of the cluster's worker nodes with --lend-nodes 2"),
        ("existing", 1, "needs 2 nodes that run containers; the existing backend lends 1; lend it 2 of the cluster's worker nodes with --lend-nodes 2"),
        ("existing", 2, ""),
        ("kind", 1, "needs 2 nodes that run containers; the kind backend lends 1; run it with --kind-workers 2"),
        ("kind", 2, ""),
        ("kind", 3, ""),
    ],
)
def test_a_backend_lending_too_few_makes_the_scenario_not_applicable(backend: str, capacity: int, said: str) -> None:
    assert scenario_run.backend_gap(load("cluster: {real_nodes: 2}\n"), backend, capacity) == said


def test_one_node_is_said_in_the_singular() -> None:
    said = scenario_run.backend_gap(load("cluster: {real_nodes: 1}\n"), "embedded", 0)
    assert said.startswith("needs 1 node that runs containers; the embedded backend lends none"), said


def test_a_scenario_on_simulated_nodes_runs_on_every_backend() -> None:
    assert scenario_run.backend_gap(load(""), "embedded", 0) == ""


WORKLOAD = """id: real-case
suite: real
title: t
level: MUST
cites: [{source: pkg/x.go}]
cluster: {real_nodes: 1}
steps:
  - apply: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: vck.workload/mpi}]}}
expect:
  - {describe: there, object: {object: {kind: Pod, name: p}, fields: {metadata.name: p}}, within: 5s}
"""


def test_a_run_without_the_workload_images_makes_the_scenario_not_applicable() -> None:
    """A plain pytest run has no images built: not applicable, never a failed image pull."""
    sc = loader.load_stream(io.StringIO(WORKLOAD), "case.yaml")
    assert "needs the workload images mpi, which `vck run` builds" in scenario_run.backend_gap(sc, "kind", 2, {})
    assert scenario_run.backend_gap(sc, "kind", 2, {"mpi": "vck-workload-mpi:abc"}) == ""
    # An existing cluster's nodes pull their images: only the user's can be there.
    assert "on an existing cluster name images its nodes can pull with --workload-images" in scenario_run.backend_gap(sc, "existing", 2, {})
    assert scenario_run.backend_gap(sc, "existing", 2, {"mpi": "registry.example/mpi:1"}) == ""


def test_gpus_on_real_nodes_are_only_kinds() -> None:
    """The fake device plugin is deployed on kind's workers only: elsewhere a real pod asking for
    GPUs would wait for ever, so the scenario is not applicable, saying why."""
    sc = loader.load_stream(io.StringIO(WORKLOAD.replace("image: vck.workload/mpi}", "image: vck.workload/mpi, resources: {limits: {nvidia.com/gpu: 2}}}")), "case.yaml")
    images = {"mpi": "registry.example/mpi:1"}
    assert scenario_run.backend_gap(sc, "kind", 1, images) == ""
    assert "fake device plugin gives only on kind's workers" in scenario_run.backend_gap(sc, "existing", 1, images)


def test_a_node_step_beside_real_nodes_is_refused() -> None:
    text = WORKLOAD.replace("steps:\n", "steps:\n  - node: {add: {name: extra}}\n")
    with pytest.raises(loader.ScenarioError) as err:
        loader.load_stream(io.StringIO(text), "case.yaml")
    assert any("expected no node step beside real_nodes" in str(p) for p in err.value.problems), [str(p) for p in err.value.problems]


def _workload(folder: pathlib.Path, name: str, real_nodes: int) -> None:
    (folder / f"{name}.yaml").write_text(WORKLOAD.replace("id: real-case", f"id: {name}").replace("real_nodes: 1", f"real_nodes: {real_nodes}"))


def test_a_kind_run_gets_the_real_workers_its_selection_after_k_asks_for(tmp_path: pathlib.Path) -> None:
    """`vck run --backend kind -k alpha`: the workers and images are those of what -k selects
    (judged by pytest's own collection), not of every scenario under the paths."""
    _workload(tmp_path, "alpha", 1)
    _workload(tmp_path, "beta", 3)
    config = run_config.RunConfig(scenarios=(tmp_path,), backend=run_config.BackendConfig("kind"), keyword="alpha", reports=None)
    assert [sc.id for sc in raise_kind_workers(config)] == ["alpha"]
    assert config.backend.kind_workers == 1
    every = run_config.RunConfig(scenarios=(tmp_path,), backend=run_config.BackendConfig("kind"), reports=None)
    assert sorted(sc.id for sc in raise_kind_workers(every)) == ["alpha", "beta"] and every.backend.kind_workers == 3
    # Elsewhere no worker is raised: the scenarios are not applicable there.
    embedded = run_config.RunConfig(scenarios=(tmp_path,), reports=None)
    assert raise_kind_workers(embedded) == [] and embedded.backend.kind_workers == 0
    # An existing cluster lends what the user lends; its scenarios are chosen, no worker raised.
    existing = run_config.RunConfig(scenarios=(tmp_path,), backend=run_config.BackendConfig("existing", lend_nodes=1), reports=None)
    assert sorted(sc.id for sc in raise_kind_workers(existing)) == ["alpha", "beta"] and existing.backend.kind_workers == 0
    assert raise_kind_workers(run_config.RunConfig(scenarios=(tmp_path,), backend=run_config.BackendConfig("existing"), reports=None)) == []


def test_lending_nodes_is_the_existing_backends_and_never_negative() -> None:
    assert run_config.BackendConfig("existing", lend_nodes=2).real_node_capacity() == 2
    assert run_config.BackendConfig("kind", kind_workers=3).real_node_capacity() == 3
    assert run_config.BackendConfig("embedded").real_node_capacity() == 0
    assert any("only an existing cluster lends its own nodes" in p for p in run_config.BackendConfig("kind", lend_nodes=1).validate())
    assert any("--lend-nodes -1: must be 0 or more" in p for p in run_config.BackendConfig("existing", lend_nodes=-1).validate())
