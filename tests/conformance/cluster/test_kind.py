"""The kind backend on real kind clusters (Docker; the node image pulled, or built here offline):
suites against the reference with the verdicts they have on the embedded cluster, the fake device
plugin registered with a real kubelet, and a scenario's node shapes on an existing cluster (a kind
cluster reached only by its kubeconfig). Skipped, saying why, where no Docker engine can run."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
from typing import Iterator

import kubernetes
import pytest

from conformance.cluster import (
    base,
    docker,
    kind,
    kind_workloads,
    kube,
    workload_images,
)
from conformance.toolchain import versions
from tests.suite_runs import BROKEN_TIME_SCALE, REPO, explain, vck_run, verdicts

pytestmark = [pytest.mark.cluster, pytest.mark.kind]
# The suites the kind check runs: the scheduler's core (gang, queue) and the job plugins, whose
# pods and services are made by the controller and checked through the real API server.
SUITES = ("gang", "queue", "plugins")
# A scenario whose node is a device profile's 64-CPU, 8-GPU server (with its NUMA topology).
NODE_SHAPE_SCENARIO = "devices-gpu-request-runs"
POD_TIMEOUT_S = 180.0


@pytest.fixture(scope="module")
def engine() -> docker.Engine:
    """A Docker engine with kind's node image. The image is pulled where it can be; building it
    here takes 10 to 25 minutes, more than `make test`'s budget, so that is left to `vck kind
    image` (said in the skip)."""
    try:
        found = docker.ensure(progress=lambda _: None)
    except docker.DockerUnavailable as err:
        pytest.skip(f"no Docker engine can run here: {err}")
    image = versions.KIND_NODE_IMAGE
    if not found.has_image(image) and found.run(["pull", image], timeout=900, check=False).returncode != 0:
        pytest.skip(f"kind's node image {image} is neither here nor pullable: `vck kind image` builds it (10 to 25 minutes, once)")
    return found


def test_suites_on_kind_have_their_embedded_verdicts(tmp_path: pathlib.Path, engine: docker.Engine, request: pytest.FixtureRequest) -> None:
    proc, report = vck_run(tmp_path, "--backend", "kind", "--suite", ",".join(SUITES), "--jobs", "2")
    assert report["run"]["backend"] == "kind"
    assert proc.returncode == 0 and report["summary"]["certified"], explain(report) + proc.stderr[-2000:]
    # Asked for only now: the kind run does not wait for the shared embedded run.
    embedded = request.getfixturevalue("reference_run").report
    assert embedded is not None
    expected = {s["id"]: s["status"] for s in embedded["scenarios"] if s["suite"] in SUITES}
    assert verdicts(report) == expected


@pytest.fixture(scope="module")
def bare_kind(tmp_path_factory: pytest.TempPathFactory, engine: docker.Engine) -> Iterator[tuple[kind.KindBackend, base.ClusterHandle]]:
    """A kind cluster with one real worker and nothing of the kit's on it (shared by this module's
    tests: the device plugin's DaemonSet and the existing backend's kwok nodes do not meet)."""
    backend = kind.KindBackend(state_root=tmp_path_factory.mktemp("bare-kind"), progress=lambda _: None, workers=1)
    name = f"vck-bare-{os.getpid()}"
    handle = backend.up(name, ())
    try:
        yield backend, handle
    finally:
        backend.down(name)


def test_the_device_plugin_registers_with_a_real_kubelet_and_a_pod_gets_its_devices(engine: docker.Engine, bare_kind: tuple[kind.KindBackend, base.ClusterHandle]) -> None:
    backend, handle = bare_kind
    (worker,) = kind.worker_names(handle.name, 1)
    image = kind_workloads.deploy_device_plugin(handle, backend.kind_binary(), engine, [worker], progress=lambda _: None)
    api = kube.client(handle.kubeconfig, handle.context)
    core = kubernetes.client.CoreV1Api(api)
    allocatable = core.read_node(worker).status.allocatable
    assert allocatable.get("nvidia.com/gpu") == "8", allocatable
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-check", "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": worker},
            "containers": [{
                "name": "check", "image": image, "imagePullPolicy": "Never",
                "command": ["python3", "-c", "import os; print('NVIDIA_VISIBLE_DEVICES=' + os.environ.get('NVIDIA_VISIBLE_DEVICES', ''))"],
                "resources": {"limits": {"nvidia.com/gpu": "2"}},
            }],
        },
    }
    core.create_namespaced_pod("default", pod)
    state = kube.watch_until(
        core.list_namespaced_pod, lambda s: s.get("gpu-check", {}).get("status", {}).get("phase") in ("Succeeded", "Failed"),
        POD_TIMEOUT_S, "the pod asking for 2 GPUs to finish", namespace="default",
    )
    assert state["gpu-check"]["status"]["phase"] == "Succeeded", state["gpu-check"]["status"]
    line = core.read_namespaced_pod_log("gpu-check", "default").strip()
    assert line.startswith("NVIDIA_VISIBLE_DEVICES="), line
    devices = [d for d in line.split("=", 1)[1].split(",") if d]
    assert len(devices) == 2 and len(set(devices)) == 2, line


def test_a_scenario_gets_its_node_shapes_on_an_existing_cluster(tmp_path: pathlib.Path, bare_kind: tuple[kind.KindBackend, base.ClusterHandle]) -> None:
    """The kind cluster reached only by kubeconfig: the kit brings the scenario's 64-CPU, 8-GPU
    server as a kwok node (its own kwok controller), runs it, and takes its nodes away after."""
    _, handle = bare_kind
    proc, report = vck_run(
        tmp_path, "--kubeconfig", str(handle.kubeconfig), "--context", handle.context, "--host-address", handle.host_address, "-k", NODE_SHAPE_SCENARIO,
    )
    assert report["run"]["backend"] == "existing"
    assert verdicts(report) == {NODE_SHAPE_SCENARIO: "passed"}, explain(report) + proc.stderr[-2000:]
    core = kubernetes.client.CoreV1Api(kube.client(handle.kubeconfig, handle.context))
    left = [n.metadata.name for n in core.list_node().items if (n.metadata.annotations or {}).get("kwok.x-k8s.io/node") == "fake"]
    assert not left, f"the kit's nodes were left on the existing cluster: {left}"


def test_an_existing_cluster_lends_its_node_to_a_workload(tmp_path: pathlib.Path, engine: docker.Engine, bare_kind: tuple[kind.KindBackend, base.ClusterHandle]) -> None:
    """The kind cluster reached only by kubeconfig, its worker lent (`--lend-nodes 1`): a real
    container's exit code restarts its task, on the reference, and not with its policies off;
    the worker carries no lent label after. The image is the user's (here the kit's, already on
    the worker, as a pulled one would be)."""
    backend, handle = bare_kind
    image = workload_images.RECIPES["mpi"].tag()
    if not engine.has_image(image):
        pytest.skip(f"the workload image {image} is not built here: `vck run --backend kind --suite workloads` builds it (about two minutes)")
    subprocess.run([backend.kind_binary(), "load", "docker-image", image, "--name", handle.name, "--nodes", ",".join(handle.real_nodes)], check=True, capture_output=True, timeout=600)
    scenario = "workloads-exit-code-restarts-task"
    common = ("--kubeconfig", str(handle.kubeconfig), "--context", str(handle.context), "--host-address", handle.host_address, "--lend-nodes", "1", "--workload-images", f"mpi={image}", "-k", scenario)
    proc, report = vck_run(tmp_path / "reference", *common)
    assert report["run"]["backend"] == "existing" and verdicts(report) == {scenario: "passed"}, explain(report) + proc.stderr[-2000:]
    _, broken = vck_run(tmp_path / "broken", *common, "--impl", "reference:broken=policies", "--time-scale", BROKEN_TIME_SCALE)
    assert verdicts(broken) == {scenario: "failed"}, explain(broken)
    core = kubernetes.client.CoreV1Api(kube.client(handle.kubeconfig, handle.context))
    assert not core.list_node(label_selector="conformance.vck.io/lent=true").items, "the lent label was left on the cluster's node"


def test_a_killed_kind_run_leaves_a_cluster_that_list_shows_and_prune_deletes(tmp_path: pathlib.Path, engine: docker.Engine) -> None:
    """`kill -9` gives `vck run --backend kind` no chance to delete its kind cluster: `vck cluster
    list` shows it with an owner that is gone, and `vck cluster prune` deletes it (containers,
    the kit's kwok controller and state)."""
    env = {**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")}
    run = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--backend", "kind", "--reports", str(tmp_path / "reports"), "--jobs", "1", "-k", "gang-full-occupancy"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert run.stderr is not None
        # The run's own progress: the cluster is up once it says so (stderr closes if it exits).
        for line in run.stderr:
            if "ready in" in line and "kind cluster" in line:
                break
        name = next(iter(kind.KindBackend(state_root=tmp_path / "state" / "kind").kit_clusters()), None)
        assert name is not None and run.poll() is None, "the run should be running with its kind cluster up"
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(60)
    backend = kind.KindBackend(state_root=tmp_path / "state" / "kind", progress=lambda _: None)
    assert name in backend.clusters(), "the killed run's kind cluster should still be there"
    cli = [sys.executable, "-m", "conformance.cli", "cluster"]
    listed = subprocess.run([*cli, "list"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert f"{name}" in listed.stdout and " kind " in listed.stdout and "1 cluster(s) whose owner is gone" in listed.stdout, listed.stdout
    pruned = subprocess.run([*cli, "prune"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert pruned.returncode == 0 and f"removed 1 cluster(s) whose owner is gone: {name}" in pruned.stdout, pruned.stdout + pruned.stderr
    assert name not in backend.clusters() and not backend.kit_clusters()


# The workload the kind check runs for real: three processes on two real workers talking over TCP,
# the smallest of the workloads suite (the mpi image, no framework start-up).
WORKLOAD_SCENARIO = "workloads-tensorflow-peers-reach-each-other"


def test_a_workload_runs_in_real_containers_on_kind_and_not_without_its_plugin(tmp_path: pathlib.Path, engine: docker.Engine) -> None:
    """A workloads scenario on kind's real workers (the image built and loaded, the workers lent):
    passed on the reference, failed with its job plugins off. Skipped where the image is not
    built yet (about two minutes, plus two to load it: `vck run --backend kind --suite workloads`
    builds it)."""
    image = workload_images.RECIPES["mpi"].tag()
    if not engine.has_image(image):
        pytest.skip(f"the workload image {image} is not built here: `vck run --backend kind --suite workloads` builds it (about two minutes)")
    proc, report = vck_run(tmp_path / "reference", "--backend", "kind", "-k", WORKLOAD_SCENARIO, "--jobs", "1")
    assert verdicts(report) == {WORKLOAD_SCENARIO: "passed"}, explain(report) + proc.stderr[-2000:]
    assert report["run"]["backend"] == "kind"
    _, broken = vck_run(tmp_path / "broken", "--backend", "kind", "-k", WORKLOAD_SCENARIO, "--jobs", "1", "--impl", "reference:broken=job-plugins")
    assert verdicts(broken) == {WORKLOAD_SCENARIO: "failed"}, explain(broken)


# The suites the issue names for real Volcano installed in the cluster: scheduler core, preemption
# and the job plugins.
VOLCANO_SUITES = ("gang", "queue", "preempt", "plugins")


@pytest.mark.skipif(os.environ.get("VCK_TEST_VOLCANO") != "1", reason="builds real Volcano from Go modules (minutes): set VCK_TEST_VOLCANO=1 to run")
def test_volcano_installed_on_kind_has_its_embedded_verdicts(tmp_path: pathlib.Path, engine: docker.Engine) -> None:
    """Volcano from its own manifests, with images built here from its binaries and loaded into
    kind, scored on kind; the same build run as processes on the embedded cluster: the verdicts
    match scenario by scenario (a scenario Volcano fails, it fails on both)."""
    suites = ",".join(VOLCANO_SUITES)
    proc, report = vck_run(tmp_path / "kind", "--backend", "kind", "--impl", "volcano-manifests", "--suite", suites, "--jobs", "2")
    assert (report["run"]["backend"], report["run"]["implementation"], report["run"]["versions"]["volcano"]) == ("kind", "volcano-manifests", versions.VOLCANO_VERSION), report["run"]
    assert report["scenarios"] and all(s["status"] not in ("error", "not_run") for s in report["scenarios"]), explain(report) + proc.stderr[-3000:]
    _, embedded = vck_run(tmp_path / "embedded", "--impl", "volcano", "--suite", suites, "--jobs", "2")
    assert verdicts(report) == verdicts(embedded), f"kind:\n{explain(report)}\nembedded:\n{explain(embedded)}"


@pytest.mark.skipif(os.environ.get("VCK_TEST_VOLCANO") != "1", reason="builds real Volcano from Go modules (minutes): set VCK_TEST_VOLCANO=1 to run")
def test_the_ci_recipe_certifies_volcano_from_its_chart_with_the_embedded_verdicts(tmp_path: pathlib.Path, engine: docker.Engine) -> None:
    """ci/certify-on-kind.sh end to end, offline: the pinned release's images built here from its
    binaries, its own chart installed with the kit's helm (post-install steps included), the suites
    scored on kind in two shards merged; the verdicts are the embedded run's of the same build, and
    each Volcano pod's log is kept beside the report."""
    vck = tmp_path / "vck"
    vck.write_text(f"#!/bin/sh\ncd {REPO} && exec {sys.executable} -m conformance.cli \"$@\"\n")
    vck.chmod(0o755)
    suites = ",".join(VOLCANO_SUITES)
    reports = tmp_path / "reports"
    env = {**os.environ, "VCK": str(vck), "VCK_SUITES": suites, "VCK_REPORTS": str(reports), "VCK_STATE_DIR": str(tmp_path / "state")}
    for shard in ("1/2", "2/2"):
        proc = subprocess.run(["bash", str(REPO / "ci" / "certify-on-kind.sh")], env={**env, "VCK_SHARD": shard}, capture_output=True, text=True, timeout=3000, stdin=subprocess.DEVNULL)
        assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-2000:]
        assert list((reports / f"certify-{shard.replace('/', '-of-')}" / "logs").glob("*/volcano-scheduler-*.log")), "Volcano's pod logs are kept"
    merged = subprocess.run([str(vck), "report", "merge", *map(str, sorted(reports.glob("certify-*-of-2"))), "--reports", str(reports), "--run-id", "merged"], capture_output=True, text=True, timeout=120)
    assert merged.returncode in (0, 1), merged.stdout + merged.stderr
    report = json.loads((reports / "merged" / "report.json").read_text())
    assert (report["run"]["backend"], report["run"]["implementation"]) == ("kind", "volcano-helm"), report["run"]
    assert report["scenarios"] and all(s["status"] not in ("error", "not_run") for s in report["scenarios"]), explain(report)
    _, embedded = vck_run(tmp_path / "embedded", "--impl", "volcano", "--suite", suites, "--jobs", "2")
    assert verdicts(report) == verdicts(embedded), f"kind:\n{explain(report)}\nembedded:\n{explain(embedded)}"
