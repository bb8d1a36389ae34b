"""The run's configuration (conformance.config), declared once: it travels whole (to xdist's
workers serialised once), its `--vck-*` pytest options are made from its fields, and it is
validated in one place."""

from __future__ import annotations

import argparse
import dataclasses
import pathlib

import pytest

from conformance import cli, config
from conformance.api import bridge


def _settings(run: config.RunConfig) -> dict[str, object]:
    return {f.name: getattr(run, f.name) for f in dataclasses.fields(run) if not f.name.startswith("_")}


def test_a_run_travels_whole_and_comes_back_equal() -> None:
    run = config.RunConfig(
        backend=config.BackendConfig("embedded", "/tmp/kubeconfig", "ctx", 0, "10.0.0.1", "1.34"),
        scenarios=(pathlib.Path("/tmp/a"), pathlib.Path("/tmp/b")), suites=("gang",), keyword="gang and not x",
        implementation="reference:broken=gang", jobs=1, time_scale=2.5, reports=pathlib.Path("/tmp/reports"), run_id="r",
        timeout_s=60.0, repeat=3, stress=2, durations=pathlib.Path("/tmp/old.json"),
    )
    assert _settings(config.RunConfig.from_json(run.to_json())) == _settings(run)
    spec = bridge.RunSpec.of(run, "r", progress=True)
    back = bridge.RunSpec.from_json(spec.to_json())
    assert (back.run_id, back.progress, back.durations, back.any_folder) == ("r", True, pathlib.Path("/tmp/old.json"), True)
    assert _settings(back.config) == _settings(run)


def test_every_option_field_is_a_pytest_option_with_the_fields_default(pytester: pytest.Pytester) -> None:
    """A plain `pytest` run reads the same fields: each has its `--vck-*` flag, made from the field."""
    flags = {opt.flag for _, _, opt in config.option_fields()}
    assert {"--vck-impl", "--vck-backend", "--vck-kubeconfig", "--vck-time-scale", "--vck-repeat", "--vck-stress", "--vck-scenarios"} <= flags
    helped = pytester.runpytest_inprocess("--help", "-p", "no:cacheprovider").stdout.str()
    assert all(flag in helped for flag in flags), sorted(f for f in flags if f not in helped)


def test_options_become_the_configuration() -> None:
    run = config.from_options({"name": "kind", "kind_workers": "2", "implementation": "volcano", "time_scale": "1.5", "repeat": "4", "scenarios": ["/x"], "reports": None})
    assert (run.backend.name, run.backend.kind_workers, run.implementation, run.time_scale, run.repeat) == ("kind", 2, "volcano", 1.5, 4)
    assert run.scenarios == (pathlib.Path("/x"),)
    # A plain pytest run writes reports only when asked.
    assert run.reports is None and config.from_options({"reports": "/r"}).reports == pathlib.Path("/r")


def test_settings_are_validated_in_one_place() -> None:
    bad = config.RunConfig(backend=config.BackendConfig("nowhere", kind_workers=-1), time_scale=0, repeat=0, stress=-1, jobs="lots", implementation="nope")
    found = bad.validate_settings()
    for expected in ("backend 'nowhere'", "--kind-workers -1", "--time-scale 0", "--repeat 0", "--stress -1", "--jobs 'lots'", "nope"):
        assert any(expected in p for p in found), (expected, found)
    shared = config.RunConfig(backend=config.BackendConfig("existing"), jobs=3)
    assert any("an existing cluster is shared" in p for p in shared.validate_settings())
    assert any("the kit runs v1.31.3" in p for p in config.BackendConfig(kube_version="1.29").validate())
    assert any("an existing cluster runs its own Kubernetes" in p for p in config.BackendConfig("existing", kube_version="1.35").validate())
    # kind runs kind's node image of that release; a node image of the user's says its own.
    assert not config.BackendConfig("kind", kube_version="1.35").validate()
    assert any("give one" in p for p in config.BackendConfig("kind", kube_version="1.35", kind_image="mine:1").validate())
    assert not config.BackendConfig(kube_version="v1.35").validate()


def _dests(parser: argparse.ArgumentParser, *path: str) -> dict[str, argparse.Action]:
    """The actions of `vck <path...>`'s parser by their dest."""
    for word in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return {a.dest: a for a in parser._actions}


def test_every_option_field_is_a_flag_whose_dest_is_the_fields_path() -> None:
    """What makes a new run option one field and its flag: `vck run` (and, for the backend's fields,
    `vck cluster up`) sets each field through a flag whose dest is the field's path."""
    parser = cli.build_parser()
    run, up = _dests(parser, "run"), _dests(parser, "cluster", "up")
    for owner, field, _ in config.option_fields():
        path = f"backend.{field.name}" if owner == "backend" else field.name
        assert path in run, f"`vck run` has no flag for {path}"
        if owner == "backend":
            assert path in up, f"`vck cluster up` has no flag for {path}"


def test_the_command_line_becomes_the_configuration_by_field_name() -> None:
    args = cli.build_parser().parse_args([
        "run", "/tmp/a", "/tmp/b", "--suite", "gang,queue", "--suite", "preempt", "-k", "not slow", "--impl", "volcano:v1.15.1",
        "--backend", "kind", "--kind-workers", "2", "--kind-image", "kindest/node:v1.34.0", "--jobs", "3", "--time-scale", "2",
        "--reports", "/tmp/r", "--run-id", "x", "--timeout", "30m", "--repeat", "2", "--stress", "1", "--durations", "/tmp/d.json", "--shard", "1/2",
    ])
    run = config.from_args(config.RunConfig, vars(args))
    assert run.scenarios == (pathlib.Path("/tmp/a"), pathlib.Path("/tmp/b")) and run.suites == ("gang", "queue", "preempt")
    assert (run.keyword, run.implementation, run.jobs, run.time_scale, run.run_id, run.timeout_s, run.repeat, run.stress, run.shard) == ("not slow", "volcano:v1.15.1", "3", 2.0, "x", 1800.0, 2, 1, "1/2")
    assert (run.reports, run.durations) == (pathlib.Path("/tmp/r"), pathlib.Path("/tmp/d.json"))
    assert run.backend == config.BackendConfig("kind", kind_workers=2, kind_image="kindest/node:v1.34.0")
    assert not run.validate_settings()
    # Flags left out keep the fields' defaults.
    plain = config.from_args(config.RunConfig, vars(cli.build_parser().parse_args(["run"])))
    assert _settings(plain) == _settings(config.RunConfig())
    cluster = cli._cluster_config_of(cli.build_parser().parse_args(["cluster", "up", "--name", "c", "--kube-version", "1.34", "--nodes", "2"]))
    assert (cluster.name, cluster.nodes, cluster.backend) == ("c", "2", config.BackendConfig(kube_version="1.34"))


def test_a_node_image_is_the_kind_backends_only() -> None:
    assert any("only the kind backend runs a node image" in p for p in config.BackendConfig(kind_image="kindest/node:v1.34.0").validate())
    assert not config.BackendConfig("kind", kind_image="kindest/node:v1.34.0").validate()


# Flags that set no config field: what the commands themselves read.
NOT_CONFIG = {"help", "command", "func", "verb", "name", "nodes", "implementations", "matrix_id", "bench", "bench_nodes", "bench_pods", "bench_gang", "cluster_command"}


@pytest.mark.parametrize("path", [("run",), ("matrix",), ("cluster", "up"), ("cluster", "down"), ("cluster", "status")])
def test_every_flag_sets_a_field_of_its_config(path: tuple[str, ...]) -> None:
    """The other way round: a flag whose dest names no field would be dropped without a word."""
    fields = {f"backend.{f.name}" for f in dataclasses.fields(config.BackendConfig)} | {f.name for f in dataclasses.fields(config.RunConfig)}
    stray = set(_dests(cli.build_parser(), *path)) - fields - NOT_CONFIG
    assert not stray, f"`vck {' '.join(path)}` flags that set nothing: {sorted(stray)}"


@pytest.mark.parametrize("command", [["run"], ["cluster", "up"], ["cluster", "down"], ["cluster", "status"]])
def test_a_kubeconfig_without_a_backend_means_the_existing_backend(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    args = cli.build_parser().parse_args([*command, "--kubeconfig", "/tmp/k"])
    if command == ["run"]:
        backend = config.from_args(config.RunConfig, vars(args)).backend
        cli._existing_when_kubeconfig(args, backend, "vck run")
    else:
        backend = cli._cluster_config_of(args).backend
    assert (backend.name, backend.kubeconfig) == ("existing", "/tmp/k")
    assert "--kubeconfig given without --backend: using the existing backend on /tmp/k" in capsys.readouterr().err
    told = cli.build_parser().parse_args([*command, "--kubeconfig", "/tmp/k", "--backend", "kind"])
    assert config.from_args(config.RunConfig, vars(told)).backend.name == "kind"


def test_the_report_names_the_kubernetes_a_backend_runs() -> None:
    assert config.BackendConfig(kube_version="1.34").kubernetes() == "v1.34.1"
    assert config.BackendConfig("kind", kind_image="kindest/node:v1.34.0").kubernetes() == "v1.34.0"
    assert config.BackendConfig("kind", kind_image="kindest/node:v1.34.0@sha256:abc").kubernetes() == "v1.34.0"
    assert config.BackendConfig("kind", kind_image="mine:latest").kubernetes() == "as in the node image mine:latest"
    assert config.BackendConfig("kind").kubernetes() == config.versions.KUBERNETES_VERSION
    # etcd: the kit's only where the kit runs it (a kind node runs the etcd its kubeadm asks for).
    assert config.BackendConfig().etcd() == config.versions.ETCD_VERSION
    assert config.BackendConfig("kind", kube_version="1.34").etcd() == "as in the node image"
    assert config.BackendConfig("existing").etcd() == "as in the cluster"
