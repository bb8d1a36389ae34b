"""Volcano built from a source tree (toolchain/volcano_source.py): a checkout whose go.mod replaces
a module with a folder of its own repository (as Volcano's does from v1.14 on) builds with its own
go.mod, offline; a release tag comes out of a local repository (VCK_VOLCANO_GIT); the binaries are
stamped and cached per commit or per release. The tree is a small stand-in module, no network."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

from conformance.impl import registry
from conformance.toolchain import errors, volcano_resolve, volcano_source

pytestmark = pytest.mark.skipif(shutil.which("go") is None or shutil.which("git") is None, reason="needs go and git")

FILES = {
    "go.mod": "module volcano.sh/volcano\n\ngo 1.22\n\nrequire volcano.sh/apis v0.0.0\n\nreplace volcano.sh/apis => ./staging/src/volcano.sh/apis\n",
    "staging/src/volcano.sh/apis/go.mod": "module volcano.sh/apis\n\ngo 1.22\n",
    "staging/src/volcano.sh/apis/apis.go": 'package apis\n\nconst Group = "batch.volcano.sh"\n',
    "pkg/version/version.go": 'package version\n\nvar (\n\tVersion = "unset"\n\tGitSHA  = "unset"\n\tBuilt   = "unset"\n)\n',
    "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml": "kind: CustomResourceDefinition\n",
    "config/crd/jobflow/bases/flow.volcano.sh_jobflows.yaml": "kind: CustomResourceDefinition\n",
}
MAIN = 'package main\n\nimport (\n\t"fmt"\n\n\t"volcano.sh/apis"\n\t"volcano.sh/volcano/pkg/version"\n)\n\nfunc main() {\n\tfmt.Println("API group", apis.Group)\n\tfmt.Println("Version:", version.Version)\n}\n'


def _git(cwd: pathlib.Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


def stand_in(folder: pathlib.Path, tag: str | None = None) -> pathlib.Path:
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    for cmd in ("scheduler", "controller-manager", "webhook-manager"):
        (folder / "cmd" / cmd).mkdir(parents=True, exist_ok=True)
        (folder / "cmd" / cmd / "main.go").write_text(MAIN)
    _git(folder, "init", "-q")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "stand-in")
    if tag:
        _git(folder, "tag", tag)
    return folder


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> pathlib.Path:
    """No module proxy at all, and a cache of the test's own."""
    monkeypatch.setenv("GOPROXY", "off")
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    monkeypatch.setenv("VCK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("VCK_VOLCANO_BIN", raising=False)
    return tmp_path / "cache"


def _version(binary: pathlib.Path) -> str:
    return subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout


def test_a_checkout_with_a_local_folder_replace_builds_offline_and_is_cached_per_commit(tmp_path: pathlib.Path, offline: pathlib.Path) -> None:
    src = stand_in(tmp_path / "my-fork", tag="v1.15.1")
    tree = volcano_source.checkout_tree(src)
    assert tree.stamp == "v1.15.1" and tree.key.startswith("src-")
    lines: list[str] = []
    found = volcano_source.binaries(tree, offline, lines.append)
    assert sorted(found) == ["vc-controller-manager", "vc-scheduler", "vc-webhook-manager"]
    assert "Version: v1.15.1" in _version(found["vc-scheduler"]) and "API group batch.volcano.sh" in _version(found["vc-scheduler"])
    assert any("building ./cmd/scheduler" in line for line in lines), lines
    # Built once: a second ask is a cache hit, and a new commit is a new build.
    lines.clear()
    assert volcano_source.binaries(tree, offline, lines.append) == found and not lines
    (src / "pkg" / "version" / "extra.go").write_text("package version\n")
    _git(src, "add", "-A")
    _git(src, "commit", "-q", "-m", "more")
    again = volcano_source.checkout_tree(src)
    assert again.key != tree.key and again.stamp.startswith("v1.15.1-1-g")
    # The adapter takes the same tree: its release is the tag the tree describes.
    adapter = registry.implementation(f"volcano:src={src}")
    assert adapter.name == f"volcano:src={src}" and adapter.volcano_release() == "v1.15.1"


def test_a_release_that_needs_a_checkout_comes_from_a_local_repository(tmp_path: pathlib.Path, offline: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = stand_in(tmp_path / "mirror", tag="v1.99.0")
    monkeypatch.setenv(volcano_source.GIT_ENV, str(repo))
    assert volcano_source.needs_checkout("v1.99.0") and volcano_source.needs_checkout("v1.14.0") and not volcano_source.needs_checkout("v1.13.3")
    found = volcano_resolve.binaries("v1.99.0")
    assert "Version: v1.99.0" in _version(found["vc-webhook-manager"])
    assert volcano_resolve.source_dir("v1.99.0") == offline / "build" / "volcano-src-v1.99.0"
    assert [p.name for p in volcano_resolve.crd_files("v1.99.0")] == ["flow.volcano.sh_jobflows.yaml", "batch.volcano.sh_jobs.yaml"]
    with pytest.raises(errors.ToolchainError, match="the repository has no tag v1.98.0") as err:
        volcano_source.release_tree("v1.98.0")
    assert "git -C" in str(err.value)
    assert not (repo / "cmd" / "scheduler" / "vc-scheduler").exists(), "nothing is built into the user's repository"
    assert os.environ["GOPROXY"] == "off"
