"""Every module of the kit, the reference and the fake devices imports on its own, and no package's
imports go round in a circle: a module that works only when another happened to be imported first
breaks the first program or test that imports it alone."""

from __future__ import annotations

import ast
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("conformance", "reference_scheduler", "fake_devices")

# Imports each module named on stdin in a child forked from a parent that has loaded only the
# third-party libraries: every child starts with none of the project's modules, as a fresh
# interpreter would, without paying for a whole interpreter per module.
ISOLATED_IMPORTS = """
import importlib, os, sys, traceback
import kubernetes, yaml, numpy, grpc, requests, jsonschema, pytest  # shared, loaded once
failed = []
for name in sys.stdin.read().split():
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failed.append(name)
print("FAILED " + " ".join(failed) if failed else "OK")
"""


def modules(package: str) -> dict[str, pathlib.Path]:
    found = {}
    for path in sorted((REPO / package).rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # runs the program
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module's imports of the package's modules at import time (not those under
    `if TYPE_CHECKING:` nor inside functions)."""
    known = modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        deps: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            for sub in ast.walk(node) if isinstance(node, (ast.Import, ast.ImportFrom, ast.If, ast.Try)) else ():
                if isinstance(sub, ast.Import):
                    deps |= {a.name for a in sub.names if a.name in known}
                elif isinstance(sub, ast.ImportFrom) and sub.module and sub.module.split(".")[0] == package:
                    for alias in sub.names:
                        child = f"{sub.module}.{alias.name}"
                        deps.add(child if child in known else sub.module)
        graph[name] = {d for d in deps if d in known and d != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package: str) -> None:
    found = circles(import_graph(package))
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_circles_are_found() -> None:
    """The check itself: a circle of three is reported, a chain is not."""
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_imports_on_its_own(package: str) -> None:
    names = sorted(modules(package))
    assert len(names) > 5
    proc = subprocess.run([sys.executable, "-c", ISOLATED_IMPORTS], input=" ".join(names), cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip() == "OK", proc.stdout + proc.stderr[-5000:]


def test_the_import_contracts_hold_and_catch_an_import_of_the_reference(tmp_path: pathlib.Path) -> None:
    """`make lint`'s contracts (pyproject.toml) pass on the code, and fail, naming the import, on
    a copy of the kit with one module that imports the reference."""
    lint_imports = pathlib.Path(sys.executable).with_name("lint-imports")
    kept = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert kept.returncode == 0 and "0 broken" in kept.stdout, kept.stdout[-3000:] + kept.stderr
    shutil.copytree(REPO / "conformance", tmp_path / "conformance", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "conformance" / "expect" / "peek.py").write_text("from reference_scheduler.scheduler import conf\n")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    # The copy comes first on the path, so it is the `conformance` the contracts are checked on.
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    broken = subprocess.run([str(lint_imports), "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert broken.returncode != 0, broken.stdout[-3000:]
    assert "conformance.expect.peek -> reference_scheduler.scheduler.conf" in broken.stdout, broken.stdout[-3000:]


def test_no_test_module_imports_from_a_conftest() -> None:
    """A conftest holds fixtures and hooks, which pytest finds by itself; what tests share by import
    lives in a helper module (tests/clusters.py, the harnesses beside the tests that use them)."""
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if any(name.split(".")[-1] == "conftest" for name in names):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, "imports from a conftest: " + ", ".join(found)
