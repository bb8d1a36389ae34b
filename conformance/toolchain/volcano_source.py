"""Real Volcano built from a source tree: a release whose go.mod cannot be built as a module, or a
checkout a user hands the kit (`--impl volcano:src=PATH`: Volcano or a fork, as a scheduler
build's CI has it in hand).

From v1.14 on, Volcano's go.mod replaces volcano.sh/apis with a folder inside its own repository
(`volcano.sh/apis => ./staging/src/volcano.sh/apis`); a module download never carries a nested
module, so those releases build only from a checkout of the tag. The kit takes the tag's tree
from a git repository: `VCK_VOLCANO_GIT=DIR` (a local clone or mirror, bare or not, for machines
without internet), else a shallow clone of the tag from github.com/volcano-sh/volcano into the
cache. The tree is extracted under the cache (never into the project) and built with its own
go.mod, its three binaries stamped with the version as Volcano's Makefile stamps them; the
binaries are cached per release, or per commit for a source tree.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import tarfile
import time
from typing import Callable

from conformance.toolchain import cache, errors, gobuild, install, versions, volcano

Progress = Callable[[str], None]
GIT_ENV = "VCK_VOLCANO_GIT"
UPSTREAM = "https://github.com/volcano-sh/volcano.git"
# The lock of Volcano's builds: a cluster start never waits for one.
LOCK = "volcano.lock"
# A tree fully extracted: written last.
_EXTRACTED = ".vck-extracted"


@dataclasses.dataclass(frozen=True)
class Tree:
    """A Volcano source tree and what its binaries are called by: `key` names the cache folders
    (a release tag, or `src-<commit>`), `stamp` is the version the binaries print."""

    path: pathlib.Path
    key: str
    stamp: str


def needs_checkout(version: str) -> bool:
    """Whether a release's go.mod replaces a module with a folder of its own repository, so it
    builds only from a checkout (release data: versions.VOLCANO_CHECKOUT_FROM)."""
    return _numbers(version) >= _numbers(versions.VOLCANO_CHECKOUT_FROM)


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version.split("-")[0])[:3])


def _git(args: list[str], cwd: pathlib.Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise errors.ToolchainError(f"git {args[0]}", f"`git {' '.join(args)}` did not run: {err}", "install git") from err


def _repository(version: str, root: pathlib.Path, progress: Progress) -> pathlib.Path:
    """A git repository that has the tag: VCK_VOLCANO_GIT, else a shallow clone of it into the cache."""
    explicit = os.environ.get(GIT_ENV)
    if explicit:
        repo = pathlib.Path(explicit).expanduser()
        if _git(["--git-dir", str(_git_dir(repo)), "rev-parse", "--verify", "--quiet", f"{version}^{{commit}}"]).returncode != 0:
            raise errors.ToolchainError(
                f"find Volcano {version} in {GIT_ENV}={repo}",
                f"the repository has no tag {version}",
                f"fetch the tag there (git -C {repo} fetch --tags {UPSTREAM}), or point {GIT_ENV} at a clone that has it",
            )
        return _git_dir(repo)
    clone = root / "git" / f"volcano-{version}.git"
    if (clone / "HEAD").is_file():
        return clone
    progress(f"volcano {version}: cloning the tag from {UPSTREAM}")
    shutil.rmtree(clone, ignore_errors=True)
    done = _git(["clone", "--bare", "--depth", "1", "--branch", version, UPSTREAM, str(clone)])
    if done.returncode != 0:
        shutil.rmtree(clone, ignore_errors=True)
        said = (done.stderr or done.stdout).strip().splitlines()
        raise errors.ToolchainError(
            f"clone Volcano {version}",
            said[-1] if said else "git clone failed",
            f"without internet, point {GIT_ENV} at a local clone or mirror of {UPSTREAM} that has the tag",
        )
    return clone


def _git_dir(repo: pathlib.Path) -> pathlib.Path:
    """The git directory of a clone (`repo/.git`) or of a bare repository or mirror (`repo`)."""
    return repo / ".git" if (repo / ".git").exists() else repo


def release_tree(version: str, root: pathlib.Path | None = None, progress: Progress = lambda _: None) -> Tree:
    """The tag's source tree, extracted under the cache (once)."""
    volcano.check_version(version)
    root = root or cache.cache_dir()
    tree = cache.build_dir("volcano-src", version, root)
    if not (tree / _EXTRACTED).is_file():
        repo = _repository(version, root, progress)
        progress(f"volcano {version}: extracting the tag's tree into {tree}")
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.Popen(["git", "--git-dir", str(repo), "archive", "--format=tar", version], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert archive.stdout is not None
        with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
            tar.extractall(tree, filter="data")
        if archive.wait() != 0:
            raise errors.ToolchainError(f"extract Volcano {version}", (archive.stderr.read().decode() if archive.stderr else "").strip() or "git archive failed")
        (tree / _EXTRACTED).write_text(version + "\n")
    return Tree(tree, version, version)


def checkout_tree(path: pathlib.Path) -> Tree:
    """A checkout the user gives (`volcano:src=PATH`): keyed by its commit (and, with uncommitted
    changes, a digest of them), stamped with `git describe` as Volcano's Makefile does."""
    path = path.expanduser().resolve()
    if not (path / "go.mod").is_file() or not (path / "cmd" / "scheduler").is_dir():
        raise errors.ToolchainError(f"use the Volcano source at {path}", "no go.mod with cmd/scheduler there", "give the root of a checkout of Volcano (or of a fork)")
    commit = _git(["rev-parse", "HEAD"], cwd=path)
    if commit.returncode != 0:
        digest = hashlib.sha256((path / "go.mod").read_bytes()).hexdigest()[:12]
        return Tree(path, f"src-{digest}-{int(time.time())}", f"src-{digest}")
    key = f"src-{commit.stdout.strip()[:12]}"
    dirty = _git(["status", "--porcelain", "--untracked-files=no"], cwd=path).stdout
    if dirty.strip():
        diff = _git(["diff", "HEAD"], cwd=path).stdout
        key += f"-dirty-{hashlib.sha256(diff.encode()).hexdigest()[:8]}"
    described = _git(["describe", "--tags", "--always", "--dirty"], cwd=path).stdout.strip()
    return Tree(path, key, described or key)


def components(tree: Tree) -> tuple[versions.Component, ...]:
    """The three binaries of a tree, keyed and stamped as the tree says."""
    return tuple(
        dataclasses.replace(comp, version=tree.key, recipe="volcano-tree", package=f"./{cmd}", version_marker=f"Version: {tree.stamp}")
        for comp, (_, cmd) in zip(versions.volcano_components(), versions.VOLCANO_BINARIES, strict=True)
    )


def binaries(tree: Tree, root: pathlib.Path | None = None, progress: Progress = lambda _: None) -> dict[str, pathlib.Path]:
    """vc-scheduler, vc-controller-manager and vc-webhook-manager of a tree: from the cache, else
    built in the tree with its own go.mod (its local replaces included)."""
    root = root or cache.cache_dir()
    wanted = components(tree)
    with install.locked(root, LOCK, progress):
        out: dict[str, pathlib.Path] = {}
        missing = []
        for comp in wanted:
            hit = install.cached(comp, root)
            if hit is not None:
                out[comp.name] = hit
            else:
                missing.append(comp)
        if missing:
            env = gobuild.find_go(progress)
            ldflags = volcano.ldflags(tree.stamp)
            for comp in missing:
                dest = cache.binary_path(comp, root)
                dest.parent.mkdir(parents=True, exist_ok=True)
                tmp = dest.with_suffix(".part")
                progress(f"{comp.name}: building {comp.package} of {tree.path} ({tree.stamp})")
                gobuild.run_go(f"go build {comp.name}", [env.go, "build", "-ldflags", ldflags, "-o", str(tmp), comp.package], tree.path, env, progress)
                tmp.replace(dest)
                out[comp.name] = install.finish(comp, root, "go", f"the source tree {tree.path}").path
    return out
