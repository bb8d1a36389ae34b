"""Regenerate the Python gRPC stubs in `generated/` from the kubelet's published proto.

The proto is read from the Go module `k8s.io/kubelet` at the pinned version, in the Go module
cache; `go mod download` fetches it through the module proxy when it is not there yet. It is not
copied into the repository; its sha256 is pinned here, so a different file is refused.

Why a script: the published `api.proto` imports gogo.proto and sets gogoproto options, which only
matter to Go code generation and would make protoc need gogo's proto tree. The script strips them
(the wire format does not change: gogoproto options never touch field numbers, names or types),
compiles the result with grpcio-tools (the `test` extra) and writes `api_pb2.py`, `api_pb2.pyi` and
`api_pb2_grpc.py`. The generated files are committed so running the plugin needs only grpcio and
protobuf; they are never edited by hand.

    .venv/bin/python -m fake_devices.deviceplugin.generate           # rewrite generated/
    .venv/bin/python -m fake_devices.deviceplugin.generate --check   # exit 1 if generated/ is stale

The stripped proto is compiled as `fake_devices/deviceplugin/generated/api.proto` so the stubs
import each other by their package path; the proto package stays `v1beta1`, so the gRPC service
names on the wire (`/v1beta1.DevicePlugin/Allocate`) are the kubelet's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import pathlib
import re
import subprocess
import sys
import tempfile

logger = logging.getLogger(__name__)

HERE = pathlib.Path(__file__).resolve().parent
MODULE = "k8s.io/kubelet"
# The staging copy of the Kubernetes version the kit pins (conformance/toolchain/versions.py).
MODULE_VERSION = "v0.33.2"
PROTO_IN_MODULE = "pkg/apis/deviceplugin/v1beta1/api.proto"
PROTO = f"{MODULE}@{MODULE_VERSION}/{PROTO_IN_MODULE}"
GENERATED = HERE / "generated"
# Where the stripped proto sits for protoc, relative to the import root: it names the modules.
PROTO_IMPORT_PATH = "fake_devices/deviceplugin/generated/api.proto"
GENERATED_FILES = ("api_pb2.py", "api_pb2.pyi", "api_pb2_grpc.py")
# sha256 of k8s.io/kubelet@v0.33.2 pkg/apis/deviceplugin/v1beta1/api.proto, byte for byte.
UPSTREAM_SHA256 = "4a553e5bdb8accddbe3495ec37f7377637fbba58f4e1e3470c81bbacae946862"
INIT_TEXT = f'"""Stubs generated from {PROTO} by ../generate.py: never edit by hand."""\n'

_GOGO_IMPORT = re.compile(r'^import\s+"github\.com/gogo/protobuf/gogoproto/gogo\.proto";\s*\n', re.MULTILINE)
_GOGO_FILE_OPTION = re.compile(r"^option\s+\(gogoproto\.[a-z_]+\)\s*=\s*[^;]+;\s*\n", re.MULTILINE)
_GOGO_FIELD_OPTION = re.compile(r'\s*\[\(gogoproto\.[a-z_]+\)\s*=\s*"[^"]*"\]')


class GenerateError(Exception):
    """The published proto or the generator is not what this script expects."""


def module_dir() -> pathlib.Path:
    """The pinned k8s.io/kubelet in the Go module cache, downloaded through the proxy if absent."""
    try:
        out = subprocess.run(
            ["go", "mod", "download", "-json", f"{MODULE}@{MODULE_VERSION}"],
            capture_output=True, text=True, timeout=300, check=False, env={**os.environ, "GOFLAGS": "-mod=mod"},
        )
    except FileNotFoundError as err:
        raise GenerateError("`go` is not on PATH: it fetches the published proto (k8s.io/kubelet) from the module proxy") from err
    info = json.loads(out.stdout or "{}")
    if out.returncode != 0 or not info.get("Dir"):
        raise GenerateError(f"go mod download {MODULE}@{MODULE_VERSION} failed: {info.get('Error') or out.stderr.strip()}")
    return pathlib.Path(info["Dir"])


def published_proto() -> str:
    """The published proto's text, checked against the pinned sha256."""
    text = (module_dir() / PROTO_IN_MODULE).read_text()
    check_upstream(text)
    return text


def check_upstream(text: str) -> None:
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest != UPSTREAM_SHA256:
        raise GenerateError(
            f"{PROTO}: sha256 {digest}, expected {UPSTREAM_SHA256}; when moving to a new pinned "
            "Kubernetes, update MODULE_VERSION and UPSTREAM_SHA256 together, then regenerate"
        )


def strip_gogo(text: str) -> str:
    """The proto without gogo.proto's import, file options and field options."""
    stripped = _GOGO_FIELD_OPTION.sub("", _GOGO_FILE_OPTION.sub("", _GOGO_IMPORT.sub("", text)))
    leftover = [f"line {n}: {line.strip()}" for n, line in enumerate(stripped.splitlines(), 1) if "gogoproto" in line]
    if leftover:
        raise GenerateError(f"{PROTO}: gogoproto still referenced after stripping ({'; '.join(leftover)}); extend strip_gogo")
    return stripped


def render() -> dict[str, str]:
    """Compile the stripped proto; the generated files' names mapped to their text."""
    try:
        from grpc_tools import protoc  # the `test` extra: only needed to regenerate
    except ImportError as err:
        raise GenerateError("grpcio-tools is not installed: run `.venv/bin/pip install -e '.[test]'`") from err
    published = published_proto()
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "src"
        out = pathlib.Path(tmp) / "out"
        (src / PROTO_IMPORT_PATH).parent.mkdir(parents=True)
        out.mkdir()
        (src / PROTO_IMPORT_PATH).write_text(strip_gogo(published))
        include = pathlib.Path(protoc.__file__).parent / "_proto"
        args = ["protoc", f"-I{src}", f"-I{include}", f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}", PROTO_IMPORT_PATH]
        if protoc.main(args) != 0:
            raise GenerateError(f"protoc failed on the stripped {PROTO} (arguments: {' '.join(args)})")
        produced = (out / PROTO_IMPORT_PATH).parent
        files = {name: (produced / name).read_text() for name in GENERATED_FILES}
    files["__init__.py"] = INIT_TEXT
    return files


def stale(target: pathlib.Path = GENERATED) -> list[str]:
    """Generated files that differ from a fresh run (missing ones included)."""
    return [name for name, text in render().items() if not (target / name).is_file() or (target / name).read_text() != text]


def write(target: pathlib.Path = GENERATED) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name, text in render().items():
        (target / name).write_text(text)
        logger.info("wrote %s", target / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fake_devices.deviceplugin.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if generated/ differs from a fresh run")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.check:
            differ = stale()
            if differ:
                print(f"{GENERATED}: stale {', '.join(differ)}; run python -m fake_devices.deviceplugin.generate", file=sys.stderr)
                return 1
            return 0
        write()
    except GenerateError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
