"""Build toolchain components from Go modules through the module proxy: the path that always works.

Each recipe writes a small wrapper module into the cache, resolves it with `go mod tidy` and builds
the binaries with `go build`. Kubernetes cannot be required as a plain module because its go.mod
points every staging module (k8s.io/api, k8s.io/client-go, ...) at a local folder; the wrapper
replaces each one with its published v0.x release instead, read from Kubernetes' own go.mod so the
list is never out of date. Volcano's wrapper repeats Volcano's own replace block (toolchain.volcano).

Every go command runs under `nice -n 19`: a build takes both cores for minutes, and whatever else
runs on the machine (a test run, a cluster) should not starve meanwhile.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
import shutil
import subprocess
import threading
import time
from typing import Callable, Sequence

from conformance.toolchain import errors, versions, volcano

Progress = Callable[[str], None]
HEARTBEAT_S = 20.0
_STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/src/", re.MULTILINE)
_GO_VERSION = re.compile(r"go(\d+)\.(\d+)")


@dataclasses.dataclass(frozen=True)
class GoEnv:
    go: str
    version: tuple[int, int]

    def environ(self) -> dict[str, str]:
        env = dict(os.environ)
        # Never let `go` download a different toolchain: build with the one installed, or say why not.
        env["GOTOOLCHAIN"] = "local"
        env["GOFLAGS"] = "-mod=mod"
        env["CGO_ENABLED"] = "0"
        return env


def find_go(progress: Progress) -> GoEnv:
    """The local Go, checked to be new enough; a clear error when it is missing or too old."""
    go = shutil.which("go")
    need = ".".join(map(str, versions.MINIMUM_GO))
    if go is None:
        raise errors.ToolchainError(
            "find go",
            "no `go` command on PATH, and the release downloads were not reachable",
            f"install Go {need} or newer (https://go.dev/doc/install), or make the release sites reachable",
        )
    try:
        out = subprocess.run([go, "version"], capture_output=True, text=True, timeout=60, env={**os.environ, "GOTOOLCHAIN": "local"})
    except (OSError, subprocess.TimeoutExpired) as err:
        raise errors.ToolchainError("find go", f"`{go} version` did not run: {err}", f"reinstall Go {need}+") from err
    match = _GO_VERSION.search(out.stdout)
    if out.returncode != 0 or match is None:
        raise errors.ToolchainError("find go", f"`{go} version` printed {out.stdout.strip() or out.stderr.strip()!r}", f"reinstall Go {need}+")
    found = (int(match.group(1)), int(match.group(2)))
    if found < versions.MINIMUM_GO:
        raise errors.ToolchainError("find go", f"{go} is go{found[0]}.{found[1]}, older than go{need}", f"install Go {need} or newer")
    progress(f"using {out.stdout.strip()} ({go})")
    return GoEnv(go=go, version=found)


def _niced(argv: Sequence[str]) -> list[str]:
    nice = shutil.which("nice")
    return [nice, "-n", "19", *argv] if nice else list(argv)


def run_go(step: str, argv: Sequence[str], cwd: pathlib.Path, env: GoEnv, progress: Progress) -> str:
    """Run one go command, printing a heartbeat while it works; ToolchainError names the step."""
    started = time.monotonic()
    done = threading.Event()

    def heartbeat() -> None:
        while not done.wait(HEARTBEAT_S):
            progress(f"  {step}: still working ({time.monotonic() - started:.0f}s)")

    ticker = threading.Thread(target=heartbeat, daemon=True)
    ticker.start()
    try:
        proc = subprocess.run(_niced(argv), cwd=cwd, env=env.environ(), capture_output=True, text=True)
    except OSError as err:
        raise errors.ToolchainError(step, f"could not run {argv[0]}: {err}") from err
    finally:
        done.set()
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise errors.ToolchainError(
            step,
            f"`{' '.join(argv)}` exited {proc.returncode} in {cwd}:\n{tail}",
            "check that the Go module proxy is reachable (GOPROXY) and that the disk has room; rerun to resume",
        )
    progress(f"  {step}: done in {time.monotonic() - started:.0f}s")
    return proc.stdout


def _kubernetes_gomod(env: GoEnv, workdir: pathlib.Path, progress: Progress, kube: str) -> str:
    out = run_go(f"download k8s.io/kubernetes@{kube}", [env.go, "mod", "download", "-json", f"k8s.io/kubernetes@{kube}"], workdir, env, progress)
    return pathlib.Path(json.loads(out)["GoMod"]).read_text()


def _kubernetes_replaces(env: GoEnv, workdir: pathlib.Path, progress: Progress, kube: str = versions.KUBERNETES_VERSION, gomod: str | None = None) -> dict[str, str]:
    """Every staging module Kubernetes' go.mod replaces locally, mapped to its published version."""
    gomod = gomod if gomod is not None else _kubernetes_gomod(env, workdir, progress, kube)
    modules = sorted(set(_STAGING_REPLACE.findall(gomod)))
    if not modules:
        raise errors.ToolchainError("read Kubernetes go.mod", "found no staging replace lines", "report this: the recipe needs updating")
    overrides = versions.KUBERNETES_STAGING_OVERRIDES.get(kube, {})
    return {m: overrides.get(m, versions.staging_version(kube)) for m in modules}


def _volcano_gomod(version: str, env: GoEnv, workdir: pathlib.Path, progress: Progress) -> str:
    """Volcano's own go.mod at `version`, downloaded through the module proxy."""
    module = f"{versions.VOLCANO_MODULE}@{version}"
    progress(f"  download {module}")
    try:
        # No check on the exit status: a refusal comes back as JSON with an Error field, which
        # module_download turns into a ToolchainError that quotes the proxy.
        proc = subprocess.run(_niced([env.go, "mod", "download", "-json", module]), cwd=workdir, env=env.environ(), capture_output=True, text=True)
    except OSError as err:
        raise errors.ToolchainError(f"download {module}", f"could not run {env.go}: {err}") from err
    gomod, _ = volcano.module_download(proc.stdout or proc.stderr, version)
    return gomod.read_text()


def _kube_ldflags(v: str = versions.KUBERNETES_VERSION) -> str:
    """Stamp the real version into the binaries, as Kubernetes' own build does."""
    major, minor = v.lstrip("v").split(".")[:2]
    flags = ["-s", "-w"]
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {pkg}.gitVersion={v}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
            f"-X {pkg}.buildDate=1970-01-01T00:00:00Z",
        ]
    return " ".join(flags)


def _tools_file(packages: Sequence[str]) -> str:
    imports = "\n".join(f'\t_ "{p}"' for p in packages)
    return f"//go:build tools\n\npackage tools\n\nimport (\n{imports}\n)\n"


def _prepare(recipe: str, wanted: Sequence[versions.Component], workdir: pathlib.Path, env: GoEnv, progress: Progress) -> str:
    """Write the recipe's wrapper module into `workdir`; return the -ldflags to build with."""
    workdir.mkdir(parents=True, exist_ok=True)
    # Every component the recipe knows, whichever are wanted: one tidy resolves the modules of all,
    # so building the others later never edits a resolved wrapper.
    kube = wanted[0].version if recipe == "kubernetes" else versions.KUBERNETES_VERSION
    mine = [c for c in (*versions.components(kube), *versions.kind_components(kube)) if c.recipe == recipe]
    if recipe == "kubernetes":
        kube_gomod = _kubernetes_gomod(env, workdir, progress, kube)
        replaces = _kubernetes_replaces(env, workdir, progress, kube, kube_gomod)
        lines = "\n".join(f"\t{m} => {m} {v}" for m, v in replaces.items())
        # The wrapper declares at least the Go of Kubernetes' own go.mod.
        gomod = (
            f"module vck.local/toolchain/kubernetes\n\ngo {volcano.go_directive(kube_gomod)}\n\n"
            f"require k8s.io/kubernetes {kube}\n\nreplace (\n{lines}\n)\n"
        )
        (workdir / "tools.go").write_text(_tools_file([c.package for c in mine]))
        ldflags = _kube_ldflags(kube)
    elif recipe == "etcd":
        gomod = f"module vck.local/toolchain/etcd\n\ngo 1.23\n\nrequire go.etcd.io/etcd/server/v3 {wanted[0].version}\n"
        # etcd's own main package lives in a module with local replaces; this one-line main calls
        # the same entry point it does.
        (workdir / "main.go").write_text(
            'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\n'
            "func main() { etcdmain.Main(os.Args) }\n"
        )
        ldflags = "-s -w"
    elif recipe == "volcano":
        version = volcano.check_version(wanted[0].version)
        gomod = volcano.wrapper_gomod(_volcano_gomod(version, env, workdir, progress), version)
        # All three packages, whichever are wanted: one tidy resolves the modules for every build.
        (workdir / "tools.go").write_text(_tools_file([c.package for c in versions.volcano_components(version)]))
        ldflags = volcano.ldflags(version)
    elif recipe in ("kind", "coredns"):
        module, version = (versions.KIND_MODULE, versions.KIND_VERSION) if recipe == "kind" else ("github.com/coredns/coredns", wanted[0].version)
        gomod = f"module vck.local/toolchain/{recipe}\n\ngo 1.24.0\n\nrequire {module} {version}\n"
        (workdir / "tools.go").write_text(_tools_file([c.package for c in mine]))
        ldflags = "-s -w"
    elif recipe == "helm":
        gomod = f"module vck.local/toolchain/helm\n\ngo 1.24.0\n\nrequire {versions.HELM_MODULE} {versions.HELM_VERSION}\n"
        (workdir / "tools.go").write_text(_tools_file([versions.helm_component().package]))
        # The version and tree state, as helm's Makefile stamps a release (internal/version); the
        # commit is left out (a module download has none), so `helm version` shows no `+g<sha>`.
        pkg = f"{versions.HELM_MODULE}/internal/version"
        ldflags = f"-s -w -X {pkg}.version={versions.HELM_VERSION} -X {pkg}.gitTreeState=clean"
    elif recipe == "kwok":
        gomod = f"module vck.local/toolchain/kwok\n\ngo 1.24.0\n\nrequire sigs.k8s.io/kwok {versions.KWOK_VERSION}\n"
        (workdir / "tools.go").write_text(_tools_file([c.package for c in mine]))
        ldflags = "-s -w"
    else:
        raise errors.ToolchainError("prepare build", f"unknown recipe {recipe!r}")
    (workdir / "go.mod").write_text(gomod)
    run_go(f"resolve {recipe} modules (go mod tidy)", [env.go, "mod", "tidy"], workdir, env, progress)
    return ldflags


def build(recipe: str, wanted: Sequence[versions.Component], workdir: pathlib.Path, outdir: Callable[[versions.Component], pathlib.Path], env: GoEnv, progress: Progress) -> None:
    """Build each wanted component of one recipe, writing it to `outdir(component)/<name>`."""
    ldflags = _prepare(recipe, wanted, workdir, env, progress)
    for comp in wanted:
        dest = outdir(comp) / comp.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".part")
        progress(f"{comp.name}: building {comp.package} {comp.version} from Go modules")
        run_go(f"go build {comp.name}", [env.go, "build", "-ldflags", ldflags, "-o", str(tmp), comp.package], workdir, env, progress)
        tmp.replace(dest)
