"""The kind backend against a recording stand-in for the kind CLI (kind needs Docker, which this
machine lacks): the generated config, the exact commands, reuse, failures and cleanup."""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import pytest
import yaml

from conformance.cluster import base, kind, nodes

STAND_IN = r'''#!/usr/bin/env python3
"""Records its argv; emulates kind's answers from a state file. FAKE_KIND_FAIL=create makes
`create cluster` fail."""
import json, os, pathlib, sys
record = pathlib.Path(os.environ["FAKE_KIND_RECORD"])
state = pathlib.Path(os.environ["FAKE_KIND_STATE"])
known = json.loads(state.read_text()) if state.exists() else []
args = sys.argv[1:]
entry = {"argv": args}
if args[:2] == ["create", "cluster"]:
    entry["config"] = pathlib.Path(args[args.index("--config") + 1]).read_text()
with record.open("a") as f:
    f.write(json.dumps(entry) + "\n")
if args[:2] == ["get", "clusters"]:
    print("\n".join(known))
elif args[:2] == ["create", "cluster"]:
    if os.environ.get("FAKE_KIND_FAIL") == "create":
        print("ERROR: failed to create cluster: docker is not running", file=sys.stderr)
        sys.exit(1)
    name = args[args.index("--name") + 1]
    pathlib.Path(args[args.index("--kubeconfig") + 1]).write_text("apiVersion: v1\nkind: Config\n")
    state.write_text(json.dumps(known + [name]))
elif args[:2] == ["get", "kubeconfig"]:
    print("apiVersion: v1\nkind: Config\nclusters: []\n")
elif args[:2] == ["delete", "cluster"]:
    name = args[args.index("--name") + 1]
    state.write_text(json.dumps([k for k in known if k != name]))
else:
    sys.exit("stand-in kind: unexpected " + " ".join(args))
'''


@pytest.fixture
def fake_kind(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    binary = tmp_path / "kind"
    binary.write_text(STAND_IN)
    binary.chmod(0o755)
    record = tmp_path / "record.jsonl"
    state = tmp_path / "kind-state.json"
    monkeypatch.setenv("FAKE_KIND_RECORD", str(record))
    monkeypatch.setenv("FAKE_KIND_STATE", str(state))
    advertised: list[Any] = []
    backend = kind.KindBackend(kind_binary=str(binary), state_root=tmp_path / "vck-state", progress=lambda _: None, after_create=lambda h, g: advertised.append((h, g)))
    return {"backend": backend, "record": record, "state": state, "advertised": advertised, "root": tmp_path / "vck-state"}


def _calls(record: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def test_config_puts_the_control_plane_first_and_one_worker_per_node() -> None:
    groups = nodes.parse("2:label:zone=a;1:label:gpu=yes,taint:gpu=true:NoSchedule")
    config = kind.config_for(groups)
    assert config["apiVersion"] == "kind.x-k8s.io/v1alpha4" and config["kind"] == "Cluster"
    roles = [n["role"] for n in config["nodes"]]
    assert roles == ["control-plane", "worker", "worker", "worker"]
    assert all(n["image"] == "kindest/node:v1.33.2" for n in config["nodes"])
    assert config["nodes"][1]["labels"] == {"zone": "a"} and config["nodes"][2]["labels"] == {"zone": "a"}
    gpu = config["nodes"][3]
    assert gpu["labels"] == {"gpu": "yes"}
    patch = yaml.safe_load(gpu["kubeadmConfigPatches"][0])
    assert patch == {"kind": "JoinConfiguration", "nodeRegistration": {"taints": [{"key": "gpu", "effect": "NoSchedule", "value": "true"}]}}
    assert "kubeadmConfigPatches" not in config["nodes"][1]


def test_worker_names_follow_kind() -> None:
    assert kind.worker_names("c", 3) == ["c-worker", "c-worker2", "c-worker3"]


def test_up_status_down_commands(fake_kind: dict[str, Any]) -> None:
    backend: kind.KindBackend = fake_kind["backend"]
    handle = backend.up("ci", nodes.parse("2:label:zone=a"))
    assert handle.owned and not handle.reused and handle.context == "kind-ci"
    assert handle.kubeconfig == fake_kind["root"] / "ci" / "kubeconfig" and handle.kubeconfig.exists()
    calls = _calls(fake_kind["record"])
    assert calls[0]["argv"] == ["get", "clusters"]
    create = calls[1]
    assert create["argv"] == ["create", "cluster", "--name", "ci", "--config", str(fake_kind["root"] / "ci" / "kind-config.yaml"), "--kubeconfig", str(handle.kubeconfig), "--wait", "120s"]
    assert [n["role"] for n in yaml.safe_load(create["config"])["nodes"]] == ["control-plane", "worker", "worker"]
    assert fake_kind["advertised"] == [], "no extended resources, nothing to advertise"
    assert backend.status("ci").running
    backend.down("ci")
    assert _calls(fake_kind["record"])[-1]["argv"] == ["delete", "cluster", "--name", "ci"]
    assert not (fake_kind["root"] / "ci").exists()
    assert not backend.status("ci").running


def test_an_existing_kind_cluster_is_used_as_it_is(fake_kind: dict[str, Any]) -> None:
    fake_kind["state"].write_text(json.dumps(["mine"]))
    handle = fake_kind["backend"].up("mine", nodes.parse("3"))
    assert handle.reused and not handle.owned
    argvs = [c["argv"] for c in _calls(fake_kind["record"])]
    assert ["get", "kubeconfig", "--name", "mine"] in argvs
    assert not any(a[:2] == ["create", "cluster"] for a in argvs)


def test_extended_resources_are_advertised_after_create(fake_kind: dict[str, Any]) -> None:
    groups = nodes.parse("1:nvidia.com/gpu=8")
    handle = fake_kind["backend"].up("gpu", groups)
    assert fake_kind["advertised"] == [(handle, groups)]


def test_failed_create_says_why_and_cleans_up(fake_kind: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KIND_FAIL", "create")
    with pytest.raises(base.ClusterError) as err:
        fake_kind["backend"].up("bad", nodes.parse("1"))
    assert "create cluster --name bad" in str(err.value) and "docker is not running" in str(err.value)
    assert _calls(fake_kind["record"])[-1]["argv"] == ["delete", "cluster", "--name", "bad"]
    assert not (fake_kind["root"] / "bad").exists()


def test_interrupt_after_create_cleans_up(fake_kind: dict[str, Any]) -> None:
    def interrupted(handle: base.ClusterHandle, groups: Any) -> None:
        raise KeyboardInterrupt

    backend = kind.KindBackend(kind_binary=fake_kind["backend"].kind_binary, state_root=fake_kind["root"], progress=lambda _: None, after_create=interrupted)
    with pytest.raises(KeyboardInterrupt):
        backend.up("int", nodes.parse("1:nvidia.com/gpu=1"))
    assert _calls(fake_kind["record"])[-1]["argv"] == ["delete", "cluster", "--name", "int"]
    assert json.loads(fake_kind["state"].read_text()) == []
    assert not (fake_kind["root"] / "int").exists()


def test_missing_kind_is_reported_with_the_way_out(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(base.ClusterError) as err:
        kind.KindBackend(state_root=tmp_path, progress=lambda _: None).up("x", nodes.parse("1"))
    text = str(err.value)
    assert "kind command was not found" in text and "go install sigs.k8s.io/kind" in text and "embedded backend" in text
    assert os.environ["PATH"] == str(tmp_path)
