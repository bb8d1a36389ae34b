"""Where the `volcano` adapter's binaries and CRDs come from.

Binaries: `VCK_VOLCANO_BIN=DIR` when set (prebuilt, used as they are), else the toolchain cache,
built there on first use (minutes: see docs/volcano.md): from the `volcano.sh/volcano` Go module
for a release whose go.mod allows it (up to v1.13), from a checkout of the tag for a later one
(toolchain/volcano_source.py).
CRDs: `VCK_VOLCANO_CRDS=DIR` when set, else the release's own `config/crd/volcano/bases` and
`config/crd/jobflow/bases`, read from its source (the Go module cache, or the checkout).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

from conformance.toolchain import (
    errors,
    gobuild,
    install,
    versions,
    volcano,
    volcano_source,
)

CRDS_ENV = "VCK_VOLCANO_CRDS"
# Upstream: config/crd/volcano/bases (batch, bus, scheduling, nodeinfo, topology) and
# config/crd/jobflow/bases (the jobflow controller's kinds), as the helm chart installs them.
CRD_FOLDERS = ("config/crd/volcano/bases", "config/crd/jobflow/bases")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def binaries(version: str, root: pathlib.Path | None = None, progress: install.Progress = _stderr) -> dict[str, pathlib.Path]:
    """vc-scheduler, vc-controller-manager and vc-webhook-manager: name -> path."""
    volcano.check_version(version)
    names = [n for n, _ in versions.VOLCANO_BINARIES]
    explicit = os.environ.get(volcano.BIN_ENV)
    if explicit:
        return volcano.prebuilt(names, pathlib.Path(explicit).expanduser())
    if volcano_source.needs_checkout(version):
        return volcano_source.binaries(volcano_source.release_tree(version, root, progress), root, progress)
    # Its own lock: a cluster start (which takes the toolchain's) never waits for this build.
    resolved = install.install_components(versions.volcano_components(version), source="go", root=root, progress=progress, lock="volcano.lock")
    return {name: item.path for name, item in resolved.items()}


def source_dir(version: str, progress: install.Progress = _stderr) -> pathlib.Path:
    """The release's source folder: in Go's module cache (downloaded if missing), or, for a
    release that builds only from a checkout, the tag's extracted tree."""
    if volcano_source.needs_checkout(version):
        return volcano_source.release_tree(version, progress=progress).path
    # Quietly: the module is usually in Go's cache already and this is a lookup, not a build.
    env = gobuild.find_go(lambda _: None)
    module = f"{versions.VOLCANO_MODULE}@{volcano.check_version(version)}"
    cached = _cached_source(env, version)
    if cached is not None:
        return cached
    try:
        proc = subprocess.run([env.go, "mod", "download", "-json", module], env=env.environ(), capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise errors.ToolchainError(f"download {module}", f"`go mod download` did not finish: {err}") from err
    _, directory = volcano.module_download(proc.stdout or proc.stderr, version)
    return directory


def _cached_source(env: gobuild.GoEnv, version: str) -> pathlib.Path | None:
    """The module's source folder when an earlier download left it in Go's module cache. Go
    extracts a module there only after checking its sum, so it is used as it is: `go mod download`
    would ask the module proxy or the checksum database again, and fails where the proxy refuses
    volcano.sh modules (403) or the machine is offline, although the module is at hand."""
    try:
        proc = subprocess.run([env.go, "env", "GOMODCACHE"], env=env.environ(), capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    root = proc.stdout.strip()
    if proc.returncode != 0 or not root:
        return None
    # The cache escapes capital letters as `!` + lower case (golang.org/x/mod/module.EscapePath).
    escaped = re.sub(r"[A-Z]", lambda m: "!" + m.group().lower(), versions.VOLCANO_MODULE)
    folder = pathlib.Path(root) / f"{escaped}@{version}"
    return folder if (folder / "go.mod").is_file() else None


def crd_files(version: str, progress: install.Progress = _stderr, source: pathlib.Path | None = None) -> list[pathlib.Path]:
    """Every CRD manifest to install, in a stable order: VCK_VOLCANO_CRDS's, else those of the
    given source tree, else of the release's source."""
    explicit = os.environ.get(CRDS_ENV)
    if explicit:
        folders = [pathlib.Path(explicit).expanduser()]
    else:
        folders = [(source or source_dir(version, progress)) / f for f in CRD_FOLDERS]
    files = sorted(p for folder in folders if folder.is_dir() for p in folder.glob("*.yaml"))
    if not files:
        where = ", ".join(str(f) for f in folders)
        raise errors.ToolchainError(f"find Volcano {version} CRDs", f"no *.yaml in {where}", f"set {CRDS_ENV} to a folder of Volcano's CRD manifests")
    return files
