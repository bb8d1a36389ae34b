"""The toolchain's resolution order: cache hit, release download, go build; and its errors.

A local HTTP server stands in for the release sites (through VCK_RELEASE_SITE), and a recording
stand-in for `go` shows the order of the build steps without a ten-minute build. The real go-build
path runs in `make test` itself, which builds the toolchain before the tests.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import threading
from typing import Iterator

import pytest

from conformance.toolchain import cache, errors, gobuild, install, versions
from tests.conformance.toolchain.fake_go import FAKE_GO

VERSION_LINES = {
    "kube-apiserver": f"Kubernetes {versions.KUBERNETES_VERSION}",
    "kube-controller-manager": f"Kubernetes {versions.KUBERNETES_VERSION}",
    "kubectl": f"Client Version: {versions.KUBERNETES_VERSION}",
    "etcd": f"etcd Version: {versions.ETCD_VERSION.lstrip('v')}",
    "kwok": f"kwok version {versions.KWOK_VERSION}",
    "kwokctl": f"kwokctl version {versions.KWOK_VERSION}",
}


def _script(line: str) -> bytes:
    return f"#!/bin/sh\necho '{line}'\n".encode()


class ReleaseSite:
    """Serves fake release artifacts at the official paths and records every request."""

    def __init__(self, root: pathlib.Path) -> None:
        self.root = root
        self.requests: list[str] = []
        site = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args: object, **kwargs: object) -> None:
                super().__init__(*args, directory=str(site.root), **kwargs)  # type: ignore[arg-type]

            def do_GET(self) -> None:
                site.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def put(self, path: str, data: bytes) -> None:
        target = self.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _publish_all(site: ReleaseSite, arch: str) -> None:
    for comp in versions.COMPONENTS:
        url = comp.release_url.format(version=comp.version, arch=arch)
        path = url.split("/", 3)[3]
        payload = _script(VERSION_LINES[comp.name])
        if comp.release_member:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                info = tarfile.TarInfo(comp.release_member.format(version=comp.version, arch=arch))
                info.size = len(payload)
                info.mode = 0o755
                tar.addfile(info, io.BytesIO(payload))
            site.put(path, buf.getvalue())
        else:
            site.put(path, payload)
        if comp.release_sha256_url:
            site.put(path + ".sha256", hashlib.sha256(payload).hexdigest().encode())


@pytest.fixture
def site(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ReleaseSite]:
    server = ReleaseSite(tmp_path / "site")
    server.thread.start()
    monkeypatch.setenv("VCK_RELEASE_SITE", server.url)
    try:
        yield server
    finally:
        server.server.shutdown()


@pytest.fixture
def root(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "cache"


def test_release_download_is_used_when_reachable(site: ReleaseSite, root: pathlib.Path, monkeypatch: pytest.MonkeyPatch, path_without_go: str) -> None:
    _publish_all(site, install.go_arch())
    monkeypatch.setenv("PATH", path_without_go)  # proves nothing is built
    lines: list[str] = []
    resolved = install.install(root=root, progress=lines.append)
    assert {r.via for r in resolved.values()} == {"release"}
    for name, item in resolved.items():
        assert item.path == cache.binary_path(item.component, root)
        assert os.access(item.path, os.X_OK)
        stamp = cache.stamp_path(item.component, root).read_text()
        assert stamp.startswith("release " + site.url) and VERSION_LINES[name] in stamp
    kube_sums = [p for p in site.requests if p.endswith("kube-apiserver.sha256")]
    assert kube_sums, "the published checksum of a Kubernetes binary is fetched and checked"


def test_cache_hit_makes_no_request(site: ReleaseSite, root: pathlib.Path) -> None:
    _publish_all(site, install.go_arch())
    install.install(root=root, progress=lambda _: None)
    before = len(site.requests)
    again = install.install(root=root, progress=lambda _: None)
    assert {r.via for r in again.values()} == {"cache"}
    assert len(site.requests) == before


def test_a_binary_without_its_stamp_is_not_a_cache_hit(site: ReleaseSite, root: pathlib.Path) -> None:
    _publish_all(site, install.go_arch())
    comp = versions.component("kubectl")
    install.install(["kubectl"], root=root, progress=lambda _: None)
    cache.stamp_path(comp, root).unlink()  # as after an interrupted install
    assert install.install(["kubectl"], root=root, progress=lambda _: None)["kubectl"].via == "release"


def test_wrong_build_is_refused(site: ReleaseSite, root: pathlib.Path, monkeypatch: pytest.MonkeyPatch, path_without_go: str) -> None:
    _publish_all(site, install.go_arch())
    comp = versions.component("kwok")
    path = comp.release_url.format(version=comp.version, arch=install.go_arch()).split("/", 3)[3]
    site.put(path, _script("kwok version v0.0.1"))
    monkeypatch.setenv("PATH", path_without_go)
    with pytest.raises(errors.ToolchainError) as err:
        install.install(["kwok"], root=root, progress=lambda _: None)
    assert "verify kwok" in str(err.value) and versions.KWOK_VERSION.lstrip("v") in str(err.value)


def test_bad_checksum_falls_through_to_go_and_missing_go_is_reported(site: ReleaseSite, root: pathlib.Path, monkeypatch: pytest.MonkeyPatch, path_without_go: str) -> None:
    _publish_all(site, install.go_arch())
    comp = versions.component("kube-apiserver")
    path = comp.release_url.format(version=comp.version, arch=install.go_arch()).split("/", 3)[3]
    site.put(path + ".sha256", b"0" * 64)
    monkeypatch.setenv("PATH", path_without_go)
    lines: list[str] = []
    with pytest.raises(errors.ToolchainError) as err:
        install.install(["kube-apiserver"], root=root, progress=lines.append)
    assert any("does not match the published" in line for line in lines)
    text = str(err.value)
    assert err.value.step == "find go"
    assert "no `go` command on PATH" in text and "install Go 1.24" in text
    assert not cache.binary_path(comp, root).exists() or not cache.stamp_path(comp, root).exists()


KUBE_GOMOD = """module k8s.io/kubernetes

go 1.24.0

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
\tk8s.io/externaljwt => ./staging/src/k8s.io/externaljwt
)
"""


@pytest.fixture
def fake_go(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, path_without_go: str) -> pathlib.Path:
    bindir = tmp_path / "fakego"
    bindir.mkdir()
    go = bindir / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    gomod = tmp_path / "kubernetes.go.mod"
    gomod.write_text(KUBE_GOMOD)
    log = tmp_path / "go.log"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{path_without_go}")
    monkeypatch.setenv("FAKE_GO_LOG", str(log))
    monkeypatch.setenv("FAKE_GO_KUBE_GOMOD", str(gomod))
    monkeypatch.setenv("FAKE_GO_LINES", json.dumps(VERSION_LINES))
    return log


def _calls(log: pathlib.Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_unreachable_release_site_builds_everything_from_go_modules(root: pathlib.Path, fake_go: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VCK_RELEASE_SITE", "http://127.0.0.1:9")  # discard port: connection refused
    lines: list[str] = []
    resolved = install.install(root=root, progress=lines.append)
    assert {r.via for r in resolved.values()} == {"go"}
    calls = _calls(fake_go)
    argvs = [c["argv"] for c in calls]
    assert argvs[0] == ["version"]
    assert all(c["gotoolchain"] == "local" for c in calls)
    assert ["mod", "download", "-json", f"k8s.io/kubernetes@{versions.KUBERNETES_VERSION}"] in argvs
    built = [a[-1] for a in argvs if a[0] == "build"]
    assert built == [c.package for c in versions.COMPONENTS]
    kube_build = next(a for a in argvs if a[0] == "build" and a[-1].endswith("kube-apiserver"))
    ldflags = kube_build[kube_build.index("-ldflags") + 1]
    assert f"k8s.io/component-base/version.gitVersion={versions.KUBERNETES_VERSION}" in ldflags
    gomod = (cache.build_dir("kubernetes", versions.KUBERNETES_VERSION, root) / "go.mod").read_text()
    assert f"require k8s.io/kubernetes {versions.KUBERNETES_VERSION}" in gomod
    assert f"k8s.io/api => k8s.io/api {versions.KUBERNETES_STAGING_VERSION}" in gomod
    assert "k8s.io/externaljwt => k8s.io/externaljwt v0.33.13" in gomod
    # The mirror serves every component from one host: once it is unreachable, the others skip
    # straight to the build instead of each waiting on it.
    tried = [line for line in lines if "downloading" in line]
    assert len(tried) == 1, tried
    assert any("cannot reach 127.0.0.1:9" in line for line in lines)


def test_another_pinned_kubernetes_is_built_at_its_own_release(root: pathlib.Path, fake_go: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--kube-version 1.34`: Kubernetes' components at v1.34.1, their staging modules at v0.34.1,
    stamped so, cached apart from the default release's; etcd and kwok are shared."""
    kube = versions.kube_version("1.34")
    monkeypatch.setenv("FAKE_GO_LINES", json.dumps({**VERSION_LINES, "kube-apiserver": "Kubernetes v1.34.1", "kubectl": "Client Version: v1.34.1"}))
    resolved = install.install(["kube-apiserver", "kubectl", "etcd"], source="go", root=root, progress=lambda _: None, kube=kube)
    assert resolved["kube-apiserver"].path == cache.binary_path(versions.component("kube-apiserver", kube), root)
    assert "kube-apiserver-v1.34.1" in str(resolved["kube-apiserver"].path) and "etcd-v3.5.21" in str(resolved["etcd"].path)
    argvs = [c["argv"] for c in _calls(fake_go)]
    assert ["mod", "download", "-json", "k8s.io/kubernetes@v1.34.1"] in argvs
    gomod = (cache.build_dir("kubernetes", kube, root) / "go.mod").read_text()
    assert "require k8s.io/kubernetes v1.34.1" in gomod and "k8s.io/api => k8s.io/api v0.34.1" in gomod
    assert "externaljwt => k8s.io/externaljwt v0.34.1" in gomod, "the 1.33 substitution stays with 1.33"
    build = next(a for a in argvs if a[0] == "build" and a[-1].endswith("kube-apiserver"))
    assert "k8s.io/component-base/version.gitVersion=v1.34.1" in build[build.index("-ldflags") + 1]


def test_a_kubernetes_the_kit_does_not_pin_is_judged_on_the_nearest_pinned_minor() -> None:
    assert versions.nearest_kube("v1.30.2") == "v1.31.3" and versions.nearest_kube("v1.36.0") == "v1.35.3"


def test_source_go_never_downloads(site: ReleaseSite, root: pathlib.Path, fake_go: pathlib.Path) -> None:
    _publish_all(site, install.go_arch())
    resolved = install.install(["etcd"], source="go", root=root, progress=lambda _: None)
    assert resolved["etcd"].via == "go"
    assert site.requests == []
    assert "etcdmain.Main(os.Args)" in (cache.build_dir("etcd", versions.ETCD_VERSION, root) / "main.go").read_text()


def test_go_too_old_is_reported(root: pathlib.Path, fake_go: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GO_VERSION", "go version go1.21.3 linux/amd64")
    with pytest.raises(errors.ToolchainError) as err:
        install.install(["etcd"], source="go", root=root, progress=lambda _: None)
    assert "older than go1.24" in str(err.value)


def test_failed_build_names_the_step(root: pathlib.Path, fake_go: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_GO_LINES", "{}")  # the stand-in's build step crashes (KeyError)
    with pytest.raises(errors.ToolchainError) as err:
        install.install(["kwokctl"], source="go", root=root, progress=lambda _: None)
    assert err.value.step == "go build kwokctl"
    assert "KeyError" in str(err.value)


def test_cli_reports_missing_go_without_a_traceback(tmp_path: pathlib.Path, path_without_go: str) -> None:
    env = {**os.environ, "PATH": path_without_go, "VCK_CACHE_DIR": str(tmp_path / "cache"), "VCK_RELEASE_SITE": "http://127.0.0.1:9"}
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "toolchain", "install", "kubectl"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "no `go` command on PATH" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the real Go")
def test_real_kubernetes_gomod_yields_every_staging_module(tmp_path: pathlib.Path) -> None:
    """Against the real module: the wrapper replaces every staging module Kubernetes' go.mod lists."""
    env = gobuild.find_go(lambda _: None)
    replaces = gobuild._kubernetes_replaces(env, tmp_path, lambda _: None)
    assert {"k8s.io/api", "k8s.io/client-go", "k8s.io/apiserver", "k8s.io/kubectl"} <= set(replaces)
    assert len(replaces) >= 25
    assert replaces["k8s.io/api"] == versions.KUBERNETES_STAGING_VERSION


def test_waiting_for_another_installer_is_said(tmp_path: pathlib.Path) -> None:
    """A second installer (another worker, another checkout) says what it waits for, then goes on."""
    import fcntl

    said: list[str] = []
    spoke, entered = threading.Event(), threading.Event()

    def progress(line: str) -> None:
        said.append(line)
        spoke.set()

    with open(tmp_path / "toolchain.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)

        def second() -> None:
            with install._locked(tmp_path, "toolchain.lock", progress):
                entered.set()

        waiter = threading.Thread(target=second)
        waiter.start()
        assert spoke.wait(30) and "waiting for another installer" in said[0], said
        assert not entered.is_set()  # the lock is ours: it waits
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(30)
    assert entered.is_set() and "finished after" in said[-1], said


# What `helm version --short` prints: a release download adds `+g<commit>`, a build here does not.
HELM_RELEASE_LINE = f"{versions.HELM_VERSION}+g3a5a8e5"
HELM_BUILT_LINE = versions.HELM_VERSION


def test_helm_comes_from_its_release_download_with_the_published_checksum(site: ReleaseSite, root: pathlib.Path, monkeypatch: pytest.MonkeyPatch, path_without_go: str) -> None:
    """helm (for `--impl volcano-helm`) is resolved like the toolchain: a tarball checked against
    its `.sha256sum` file ("<hash>  <file>"), its member unpacked, its version command checked."""
    comp = versions.helm_component()
    arch = install.go_arch()
    payload = _script(HELM_RELEASE_LINE)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo(comp.release_member.format(version=comp.version, arch=arch))
        info.size, info.mode = len(payload), 0o755
        tar.addfile(info, io.BytesIO(payload))
    path = comp.release_url.format(version=comp.version, arch=arch).split("/", 3)[3]
    site.put(path, buf.getvalue())
    site.put(path + ".sha256sum", f"{hashlib.sha256(buf.getvalue()).hexdigest()}  helm-{comp.version}-linux-{arch}.tar.gz\n".encode())
    monkeypatch.setenv("PATH", path_without_go)  # proves nothing is built
    resolved = install.install_components([comp], root=root, progress=lambda _: None, lock=install.KIND_LOCK)["helm"]
    assert resolved.via == "release" and resolved.path == cache.binary_path(comp, root)
    assert HELM_RELEASE_LINE in cache.stamp_path(comp, root).read_text()
    assert any(p.endswith(".tar.gz.sha256sum") for p in site.requests)


def test_helm_is_built_from_its_go_module_stamped_with_its_release(root: pathlib.Path, fake_go: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VCK_RELEASE_SITE", "http://127.0.0.1:9")  # discard port: connection refused
    monkeypatch.setenv("FAKE_GO_LINES", json.dumps({"helm": HELM_BUILT_LINE}))
    # Named to `vck toolchain install` (never among "all": only --impl volcano-helm needs it).
    assert "helm" not in {c.name for c in versions.COMPONENTS}
    resolved = install.install(["helm"], source="go", root=root, progress=lambda _: None)["helm"]
    assert resolved.via == "go"
    argvs = [c["argv"] for c in _calls(fake_go)]
    build = next(a for a in argvs if a[0] == "build")
    assert build[-1] == "helm.sh/helm/v3/cmd/helm"
    assert f"helm.sh/helm/v3/internal/version.version={versions.HELM_VERSION}" in build[build.index("-ldflags") + 1]
    gomod = (cache.build_dir("helm", versions.HELM_VERSION, root) / "go.mod").read_text()
    assert f"require helm.sh/helm/v3 {versions.HELM_VERSION}" in gomod
