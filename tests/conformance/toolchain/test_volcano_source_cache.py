"""Volcano's source (its CRDs, the chart's admissions) is read from Go's module cache when an
earlier download left it there, without asking the module proxy or the checksum database (which
refuse or are unreachable on some machines although the module is at hand)."""

from __future__ import annotations

import os
import pathlib

import pytest

from conformance.toolchain import errors, versions, volcano_resolve

FAKE_GO = """#!/bin/sh
echo "$@" >> "$FAKE_GO_LOG"
case "$1 $2" in
  "version "*) echo "go version go1.24.4 linux/amd64" ;;
  "env GOMODCACHE") echo "$FAKE_GOMODCACHE" ;;
  "mod download") echo '{"Path": "volcano.sh/volcano", "Error": "403 Forbidden"}'; exit 1 ;;
esac
"""


@pytest.fixture
def go(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "go").write_text(FAKE_GO)
    (bindir / "go").chmod(0o755)
    log = tmp_path / "go.log"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setenv("FAKE_GO_LOG", str(log))
    monkeypatch.setenv("FAKE_GOMODCACHE", str(tmp_path / "modcache"))
    return log


def test_a_cached_module_is_used_without_a_download(tmp_path: pathlib.Path, go: pathlib.Path) -> None:
    folder = tmp_path / "modcache" / f"{versions.VOLCANO_MODULE}@v1.13.3"
    (folder / "config" / "crd" / "volcano" / "bases").mkdir(parents=True)
    (folder / "go.mod").write_text("module volcano.sh/volcano\n")
    (folder / "config" / "crd" / "volcano" / "bases" / "batch.volcano.sh_jobs.yaml").write_text("kind: CustomResourceDefinition\n")
    assert volcano_resolve.source_dir("v1.13.3") == folder
    assert [p.name for p in volcano_resolve.crd_files("v1.13.3")] == ["batch.volcano.sh_jobs.yaml"]
    assert not any(line.startswith("mod download") for line in go.read_text().splitlines())


def test_without_the_cache_the_download_is_asked_and_its_refusal_reported(go: pathlib.Path) -> None:
    with pytest.raises(errors.ToolchainError) as err:
        volcano_resolve.source_dir("v1.13.3")
    assert "403 Forbidden" in str(err.value)
    assert any(line.startswith("mod download") for line in go.read_text().splitlines())
