"""Real Volcano for the `volcano` implementation adapter: vc-scheduler, vc-controller-manager and
vc-webhook-manager of a pinned version, built from the `volcano.sh/volcano` Go module.

Volcano's go.mod pins Kubernetes' staging modules (and a few others) with a `replace` block.
Replace directives only apply in the main module, so a wrapper module that requires
volcano.sh/volcano must repeat that block, read from the very go.mod of the version it builds
(upstream: go.mod at the module root). The binaries are not part of the cluster toolchain: the
cluster never needs them, so they are built only when the adapter asks (`binaries()`).

`VCK_VOLCANO_BIN=DIR` skips the build and runs the binaries found in DIR instead (a directory
holding vc-scheduler, vc-controller-manager and vc-webhook-manager, for example from
`make vc-scheduler vc-controller-manager vc-webhook-manager` in a Volcano checkout).
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
from typing import Callable, Mapping, Sequence

from conformance.toolchain import errors, versions

Progress = Callable[[str], None]
BIN_ENV = "VCK_VOLCANO_BIN"
WRAPPER_MODULE = "vck.local/toolchain/volcano"
_VERSION = re.compile(r"^v\d+\.\d+\.\d+$")
_GO_DIRECTIVE = re.compile(r"^go\s+(\d+\.\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_REPLACE_BLOCK = re.compile(r"^replace\s*\(\s*\n(.*?)^\)", re.MULTILINE | re.DOTALL)
_REPLACE_LINE = re.compile(r"^replace[ \t]+([^(\s].*)$", re.MULTILINE)
# `old [version] => new [version]`; a target without a version is a local folder.
_DIRECTIVE = re.compile(r"^(\S+)(?:\s+(\S+))?\s+=>\s+(\S+)(?:\s+(\S+))?$")


@dataclasses.dataclass(frozen=True)
class Replace:
    """One replace directive of a go.mod, as written there."""

    old: str
    old_version: str
    new: str
    new_version: str

    def line(self) -> str:
        left = f"{self.old} {self.old_version}".strip()
        right = f"{self.new} {self.new_version}".strip()
        return f"{left} => {right}"


def check_version(version: str) -> str:
    """`version` if it is a release tag such as v1.13.3; ToolchainError otherwise."""
    if not _VERSION.match(version):
        raise errors.ToolchainError("choose Volcano version", f"{version!r} is not a release tag", "give one such as v1.13.3 (--vck-impl volcano:v1.13.3)")
    return version


def _strip_comment(line: str) -> str:
    return line.split("//", 1)[0].strip()


def parse_replaces(gomod: str, source: str = "go.mod") -> list[Replace]:
    """Every replace directive of a go.mod text, in order (block and single-line forms).

    Local-folder targets (`=> ./x`) cannot be resolved outside the module's own checkout, so they
    are refused with the line that holds one.
    """
    lines: list[str] = []
    for block in _REPLACE_BLOCK.findall(gomod):
        lines += block.splitlines()
    lines += _REPLACE_LINE.findall(gomod)
    out: list[Replace] = []
    problems: list[str] = []
    for raw in lines:
        text = _strip_comment(raw)
        if not text:
            continue
        match = _DIRECTIVE.match(text)
        if match is None:
            problems.append(f"cannot read replace directive {text!r}")
            continue
        old, old_version, new, new_version = (g or "" for g in match.groups())
        if not new_version:
            problems.append(f"replace {old} => {new} points at a local folder")
            continue
        out.append(Replace(old, old_version, new, new_version))
    if problems:
        raise errors.ToolchainError(f"read {source}", "; ".join(problems), "report this: the Volcano recipe needs updating for this version")
    return out


def go_directive(gomod: str) -> str:
    """The `go` line's version (the wrapper must declare at least as much)."""
    match = _GO_DIRECTIVE.search(gomod)
    return match.group(1) if match else "1.24.0"


def served(replace: Replace, overrides: Mapping[str, str] = versions.PROXY_SUBSTITUTES) -> Replace:
    """The directive with its target moved to a version the module proxy serves, where the pinned
    one is known to be missing there (see versions.PROXY_SUBSTITUTES)."""
    instead = overrides.get(f"{replace.new}@{replace.new_version}")
    return dataclasses.replace(replace, new_version=instead) if instead else replace


def wrapper_gomod(volcano_gomod: str, version: str, overrides: Mapping[str, str] = versions.PROXY_SUBSTITUTES) -> str:
    """The wrapper module's go.mod: require volcano.sh/volcano at `version`, with Volcano's own
    replace block repeated so the build resolves exactly the modules Volcano pins."""
    replaces = [served(r, overrides) for r in parse_replaces(volcano_gomod, f"{versions.VOLCANO_MODULE}@{version} go.mod")]
    text = f"module {WRAPPER_MODULE}\n\ngo {go_directive(volcano_gomod)}\n\nrequire {versions.VOLCANO_MODULE} {version}\n"
    if replaces:
        body = "\n".join(f"\t{r.line()}" for r in replaces)
        text += f"\nreplace (\n{body}\n)\n"
    return text


def ldflags(version: str) -> str:
    """Stamp the version into pkg/version as Volcano's Makefile does, so `--version` tells it."""
    pkg = f"{versions.VOLCANO_MODULE}/pkg/version"
    return " ".join(["-s", "-w", f"-X {pkg}.Version={version}", f"-X {pkg}.GitSHA=go-module", f"-X {pkg}.Built=1970-01-01T00:00:00Z"])


def module_download(go_json: str, version: str) -> tuple[pathlib.Path, pathlib.Path]:
    """(go.mod path, source folder) from `go mod download -json` output; ToolchainError with the
    proxy's own words when it refused."""
    try:
        info = json.loads(go_json)
    except json.JSONDecodeError as err:
        raise errors.ToolchainError(f"download {versions.VOLCANO_MODULE}@{version}", f"unreadable `go mod download -json` output: {go_json[:200]!r}") from err
    if info.get("Error") or not info.get("GoMod") or not info.get("Dir"):
        raise errors.ToolchainError(
            f"download {versions.VOLCANO_MODULE}@{version}",
            str(info.get("Error") or "no go.mod or source folder in the answer"),
            f"check that GOPROXY serves {versions.VOLCANO_MODULE} (set GOPROXY to a proxy that does, a file:// one works), "
            f"or point {BIN_ENV} at a folder of prebuilt binaries",
        )
    return pathlib.Path(info["GoMod"]), pathlib.Path(info["Dir"])


def prebuilt(names: Sequence[str], directory: pathlib.Path) -> dict[str, pathlib.Path]:
    """The binaries found in `directory` (VCK_VOLCANO_BIN); ToolchainError listing every one missing."""
    found = {n: directory / n for n in names}
    missing = [n for n, p in found.items() if not (p.is_file() and os.access(p, os.X_OK))]
    if missing:
        raise errors.ToolchainError(
            f"use prebuilt Volcano from {BIN_ENV}={directory}",
            f"no executable {', '.join(missing)} in {directory}",
            f"put all of {', '.join(names)} there, or unset {BIN_ENV} to build them from Go modules",
        )
    return found
