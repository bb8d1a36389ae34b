"""`vck toolchain install`: resolve every pinned component into the cache.

Resolution order, per component: a cache hit; the official release download where it is reachable;
`go build` through the Go module proxy, which must always work on its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import pathlib
import platform
import subprocess
import sys
import time
from typing import Callable, Iterator, Literal, Sequence

from conformance.toolchain import cache, errors, gobuild, release, versions

Source = Literal["auto", "release", "go"]
SOURCES: tuple[Source, ...] = ("auto", "release", "go")
Progress = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclasses.dataclass(frozen=True)
class Resolved:
    component: versions.Component
    path: pathlib.Path
    # How it got there: "cache", "release", or "go".
    via: str


def go_arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)


@contextlib.contextmanager
def _locked(root: pathlib.Path, name: str = "toolchain.lock", progress: Progress | None = None) -> Iterator[None]:
    """One installer at a time per cache: parallel test workers wait instead of building twice,
    and say that they wait (another installer may be building for minutes)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / name, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            began = time.monotonic()
            if progress is not None:
                progress(f"toolchain: waiting for another installer to finish with {root / name} (a first build takes about 10 minutes)")
            fcntl.flock(handle, fcntl.LOCK_EX)
            if progress is not None:
                progress(f"toolchain: the other installer finished after {time.monotonic() - began:.0f}s")
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# For other long builds that take a lock file of their own in the cache (the kind node image).
locked = _locked


def cached(component: versions.Component, root: pathlib.Path | None = None) -> pathlib.Path | None:
    """The cached binary when it is complete (stamp written after the check), else None."""
    binary = cache.binary_path(component, root)
    if cache.stamp_path(component, root).is_file() and binary.is_file():
        return binary
    return None


def verify(component: versions.Component, binary: pathlib.Path) -> str:
    """Run the binary's version command and check it is the pinned build; return what it printed."""
    argv = [str(binary), *component.version_args]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise errors.ToolchainError(f"verify {component.name}", f"`{' '.join(argv)}` did not run: {err}", "delete the cache folder and install again") from err
    printed = (out.stdout + out.stderr).strip()
    if component.version_marker not in printed:
        raise errors.ToolchainError(
            f"verify {component.name}",
            f"`{' '.join(argv)}` printed {printed[:200]!r}, expected it to mention {component.version_marker}",
            f"delete {binary.parent} and install again",
        )
    # The line that names the version (Volcano prints its API version first).
    return next((line for line in printed.splitlines() if component.version_marker in line), printed.splitlines()[0])


def finish(component: versions.Component, root: pathlib.Path, via: str, origin: str) -> Resolved:
    """A binary just put in the cache: checked with its version command, then stamped (the stamp
    is what makes a later cache hit)."""
    binary = cache.binary_path(component, root)
    line = verify(component, binary)
    cache.stamp_path(component, root).write_text(f"{via} {origin}\n{line}\n")
    return Resolved(component, binary, via)


def install(
    names: Sequence[str] = (),
    source: Source = "auto",
    root: pathlib.Path | None = None,
    progress: Progress = _stderr,
    kube: str = versions.KUBERNETES_VERSION,
) -> dict[str, Resolved]:
    """Make every named component (all when empty) present in the cache, Kubernetes' at `kube`;
    return where each is. `helm` may be named too (never part of "all": only `--impl
    volcano-helm` needs it); it installs under kind's lock."""
    if "helm" in names:
        rest = [n for n in names if n != "helm"]
        found = install_components([versions.helm_component()], source, root, progress, lock=KIND_LOCK)
        return {**found, **(install(rest, source, root, progress, kube) if rest else {})}
    wanted = [versions.component(n, kube) for n in names] if names else list(versions.components(kube))
    # Another Kubernetes release builds under a lock of its own: the default release's cluster
    # starts never wait for it.
    return install_components(wanted, source, root, progress, lock="toolchain.lock" if kube == versions.KUBERNETES_VERSION else f"toolchain-{kube}.lock")


# The lock of kind's components (the CLI and the node image's binaries): a long build of those
# never holds up a cluster start, which takes the toolchain's.
KIND_LOCK = "kind-build.lock"


def binary(name: str, progress: Progress = _stderr) -> pathlib.Path:
    """One component's binary, made present: kind's and helm under their own lock, the others
    under the toolchain's."""
    kind = [c for c in (*versions.kind_components(), versions.helm_component()) if c.name == name]
    if kind:
        return install_components(kind, progress=progress, lock=KIND_LOCK)[name].path
    return install_components([versions.component(name)], progress=progress)[name].path


def install_components(
    wanted: Sequence[versions.Component],
    source: Source = "auto",
    root: pathlib.Path | None = None,
    progress: Progress = _stderr,
    lock: str = "toolchain.lock",
) -> dict[str, Resolved]:
    """Make these components present in the cache (the ones outside the cluster toolchain too,
    such as Volcano's); return where each is. `lock` names the cache's lock file: a long build
    of something the cluster does not need takes its own, so cluster starts never wait on it."""
    if source not in SOURCES:
        raise errors.ToolchainError("choose source", f"unknown source {source!r}", f"use one of {', '.join(SOURCES)}")
    root = root or cache.cache_dir()
    # Everything cached (the stamp is written last): no lock to wait for behind a long build.
    hits = [(comp, cached(comp, root)) for comp in wanted]
    found = {comp.name: Resolved(comp, hit, "cache") for comp, hit in hits if hit is not None}
    if len(found) == len(wanted):
        return found
    arch = go_arch()
    started = time.monotonic()
    resolved: dict[str, Resolved] = {}
    with _locked(root, lock, progress):
        missing: list[versions.Component] = []
        for comp in wanted:
            hit = cached(comp, root)
            if hit is not None:
                resolved[comp.name] = Resolved(comp, hit, "cache")
            else:
                missing.append(comp)
        if missing:
            progress(f"toolchain: {len(missing)} of {len(wanted)} components to obtain into {root}")
        to_build: list[versions.Component] = []
        unreachable: set[str] = set()
        for comp in missing:
            if source == "go":
                to_build.append(comp)
                continue
            if not comp.release_url:
                if source == "release":
                    raise errors.ToolchainError(f"download {comp.name}", f"{comp.name} {comp.version} has no release download", "use --source go (or auto)")
                to_build.append(comp)
                continue
            if source == "auto" and release.release_host(comp, arch) in unreachable:
                to_build.append(comp)
                continue
            try:
                url = release.download(comp, cache.binary_path(comp, root), arch, progress)
                resolved[comp.name] = finish(comp, root, "release", url)
                progress(f"{comp.name}: installed from the release download")
            except errors.ReleaseUnavailable as err:
                if source == "release":
                    raise errors.ToolchainError(f"download {comp.name}", str(err), "check the network, or use --source go") from err
                progress(f"{comp.name}: release download unavailable ({err}); building from Go modules")
                if err.unreachable_host:
                    unreachable.add(err.unreachable_host)
                to_build.append(comp)
        if to_build:
            env = gobuild.find_go(progress)
            for recipe in dict.fromkeys(c.recipe for c in to_build):
                group = [c for c in to_build if c.recipe == recipe]
                version = group[0].version
                gobuild.build(recipe, group, cache.build_dir(recipe, version, root), lambda c: cache.bin_dir(c, root), env, progress)
                for comp in group:
                    resolved[comp.name] = finish(comp, root, "go", f"{recipe} recipe")
        if missing:
            progress(f"toolchain: ready in {time.monotonic() - started:.0f}s")
    return {c.name: resolved[c.name] for c in wanted}


def paths(root: pathlib.Path | None = None, kube: str = versions.KUBERNETES_VERSION) -> dict[str, pathlib.Path]:
    """Where each component is, installing what is missing (the call every cluster start makes)."""
    return {name: r.path for name, r in install(root=root, kube=kube).items()}
