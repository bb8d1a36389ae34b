"""The files around the plugin: the published proto, generated stubs, DaemonSet, image recipe, layering."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest
import yaml

from fake_devices.deviceplugin import cli, devices, generate
from tests import suite_runs

REPO = pathlib.Path(__file__).resolve().parents[3]
DEPLOY = REPO / "fake_devices" / "deviceplugin" / "deploy"


def test_the_published_proto_has_the_pinned_sha256() -> None:
    generate.published_proto()  # fetched through the Go module proxy; raises naming both sha256s


def test_the_proto_check_catches_an_edit() -> None:
    edited = generate.published_proto().replace("int32 allocation_size = 3;", "int64 allocation_size = 3;")
    with pytest.raises(generate.GenerateError, match="expected 4a553e5b"):
        generate.check_upstream(edited)


def test_strip_gogo_leaves_no_gogoproto_and_keeps_the_fields() -> None:
    body = generate.published_proto()
    stripped = generate.strip_gogo(body)
    assert "gogo" not in stripped
    assert "repeated string devices_ids = 1;" in stripped
    assert "repeated CDIDevice cdi_devices = 5;" in stripped
    assert stripped.count("message ") == body.count("message ")


def test_generated_stubs_match_the_proto() -> None:
    pytest.importorskip("grpc_tools", reason="grpcio-tools (the test extra) regenerates the stubs")
    assert generate.stale() == [], "run: .venv/bin/python -m fake_devices.deviceplugin.generate"


def test_daemonset_mounts_the_kubelet_device_plugin_dir() -> None:
    manifest = yaml.safe_load((DEPLOY / "daemonset.yaml").read_text())
    assert (manifest["apiVersion"], manifest["kind"]) == ("apps/v1", "DaemonSet")
    spec = manifest["spec"]["template"]["spec"]
    assert manifest["spec"]["selector"]["matchLabels"].items() <= manifest["spec"]["template"]["metadata"]["labels"].items()
    volumes = {v["name"]: v for v in spec["volumes"]}
    (container,) = spec["containers"]
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    plugin_dir = devices.DEVICE_PLUGIN_PATH
    assert volumes[mounts[plugin_dir]]["hostPath"]["path"] == plugin_dir
    # The container's arguments are ones the CLI accepts, serving in the mounted directory.
    args = cli.parser().parse_args(container["args"])
    assert str(args.socket_dir) == plugin_dir
    assert args.health_file is None or any(str(args.health_file).startswith(path + "/") for path in mounts)
    assert container["image"] == "vck-fake-device-plugin:dev"
    assert "-t vck-fake-device-plugin:dev" in (DEPLOY / "Dockerfile").read_text()


def test_image_pins_match_the_constraints() -> None:
    """The image installs the exact versions the kit's own runs use (constraints.txt)."""
    pinned = suite_runs.constraint_pins()
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    installed = dict(re.findall(r"\b(grpcio|protobuf)==([\w.]+)", dockerfile))
    assert installed == {"grpcio": pinned["grpcio"], "protobuf": pinned["protobuf"]}
    assert re.search(r"^COPY fake_devices/ ", dockerfile, re.MULTILINE)
    assert 'ENTRYPOINT ["python", "-m", "fake_devices.deviceplugin"]' in dockerfile


def test_fake_devices_never_imports_the_kit_or_the_reference_scheduler() -> None:
    offenders = []
    for path in sorted((REPO / "fake_devices").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            offenders += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in ("conformance", "reference_scheduler")]
    assert offenders == []
