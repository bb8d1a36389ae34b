"""Where the toolchain lives: a cache outside the repo, shared by every checkout and by CI."""

from __future__ import annotations

import os
import pathlib

from conformance.toolchain import versions

CACHE_ENV = "VCK_CACHE_DIR"
STATE_ENV = "VCK_STATE_DIR"


def cache_dir() -> pathlib.Path:
    """`$VCK_CACHE_DIR`, else `$XDG_CACHE_HOME/vck`, else `~/.cache/vck`."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return pathlib.Path(explicit).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = pathlib.Path(xdg) if xdg else pathlib.Path.home() / ".cache"
    return (base / "vck").resolve()


def bin_dir(component: versions.Component, root: pathlib.Path | None = None) -> pathlib.Path:
    """The folder that holds one component version's binary and its provenance stamp."""
    return (root or cache_dir()) / "bin" / component.key


def binary_path(component: versions.Component, root: pathlib.Path | None = None) -> pathlib.Path:
    return bin_dir(component, root) / component.name


def stamp_path(component: versions.Component, root: pathlib.Path | None = None) -> pathlib.Path:
    """Written last, after the binary checked out: its presence is what makes a cache hit."""
    return bin_dir(component, root) / "SOURCE"


def build_dir(recipe: str, version: str, root: pathlib.Path | None = None) -> pathlib.Path:
    return (root or cache_dir()) / "build" / f"{recipe}-{version}"


def state_dir(root: pathlib.Path | None = None) -> pathlib.Path:
    """Per-cluster state (kwok workdirs, kubeconfigs, logs): `$VCK_STATE_DIR`, else beside the binaries."""
    explicit = os.environ.get(STATE_ENV)
    if explicit and root is None:
        return pathlib.Path(explicit).expanduser().resolve()
    return (root or cache_dir()) / "clusters"
