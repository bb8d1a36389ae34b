"""The reference's modules import in one direction only: no import circle in the source (every
import statement, those inside functions too) nor at run time (what the modules actually import
while each is loaded alone in a fresh interpreter and while a scheduling cycle runs every action
and plugin). A circle hidden behind an `importlib` call made at run time, as the registry once
hid one, is caught by the second.

Also: reading a scheduler conf loads nothing but the conf module (conf.py is types only; names
are checked by conf_load.py, one level up)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = "reference_scheduler"

# Every import statement of the package, at any depth of a module (grimp reads them all), except
# those under `if TYPE_CHECKING:`, which never run.
STATIC_EDGES = """
import json, grimp
graph = grimp.build_graph("reference_scheduler", exclude_type_checking_imports=True, cache_dir=None)
edges = sorted((m, d) for m in graph.modules for d in graph.find_modules_directly_imported_by(m))
print(json.dumps({"file": __import__("reference_scheduler").__file__, "edges": edges}))
"""

# Records which module of the package imports which, as the imports happen: every `import` and
# `from ... import` (through builtins.__import__, even of a module loaded already) and every
# importlib.import_module call, by the module that makes it. A child forked per module name on
# stdin loads that module alone (the parent has loaded only third-party libraries); the name
# `cycle` instead loads a conf naming every action and plugin and runs one scheduling cycle in
# memory, so imports made only at run time are recorded too. Each child prints its edges.
RECORDED_EDGES = """
import builtins, importlib, importlib.util, json, os, sys, traceback
import kubernetes, yaml, numpy, requests, cryptography  # shared, loaded once
PACKAGE = "reference_scheduler"
real_import, real_import_module = builtins.__import__, importlib.import_module
edges = set()

def note(importer, target):
    if importer.startswith(PACKAGE) and target.startswith(PACKAGE) and importer != target:
        edges.add((importer, target))

def recording_import(name, globals=None, locals=None, fromlist=(), level=0):
    module = real_import(name, globals, locals, fromlist, level)
    importer = (globals or {}).get("__name__", "")
    if importer.startswith(PACKAGE):
        base = importlib.util.resolve_name("." * level + name, globals.get("__package__")) if level else name
        submodules = [f"{base}.{item}" for item in fromlist or () if f"{base}.{item}" in sys.modules]
        for target in submodules or [base]:
            note(importer, target)
    return module

def recording_import_module(name, package=None):
    module = real_import_module(name, package)
    note(sys._getframe(1).f_globals.get("__name__", ""), module.__name__)
    return module

def run_cycle():
    from reference_scheduler.scheduler import conf_load, cycle_profile
    from reference_scheduler.scheduler.framework import framework, registry
    text = yaml.safe_dump({"actions": ", ".join(registry.action_names()),
                           "tiers": [{"plugins": [{"name": n} for n in registry.plugin_names()]}]})
    framework.run_cycle(cycle_profile.Workload(nodes=4, pods=8, gang=2).objects(), conf_load.parse(text))

builtins.__import__ = recording_import
importlib.import_module = recording_import_module
for name in sys.stdin.read().split():
    pid = os.fork()
    if pid == 0:
        try:
            run_cycle() if name == "cycle" else real_import_module(name)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        print(json.dumps(sorted(edges)), flush=True)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        print("FAILED " + name, flush=True)
"""


def module_names(root: pathlib.Path) -> list[str]:
    names = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # runs the program
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def circles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for importer, imported in edges:
        graph.setdefault(importer, set()).add(imported)
        graph.setdefault(imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, successors = work[-1]
            w = next(successors, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return found


def shown(found: list[list[str]]) -> str:
    return "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def static_edges(root: pathlib.Path) -> list[tuple[str, str]]:
    """The package's import statements, read from the copy of the package under `root`."""
    proc = subprocess.run([sys.executable, "-c", STATIC_EDGES], cwd=root, env=_env(root), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert pathlib.Path(result["file"]).is_relative_to(root), result["file"]
    return [tuple(edge) for edge in result["edges"]]


def recorded_edges(root: pathlib.Path, names: list[str]) -> list[tuple[str, str]]:
    """What the modules named (and `cycle`) import as they run, from the copy under `root`."""
    proc = subprocess.run([sys.executable, "-c", RECORDED_EDGES], input=" ".join(names), cwd=root, env=_env(root), capture_output=True, text=True, timeout=600)
    lines = proc.stdout.splitlines()
    failed = [line for line in lines if line.startswith("FAILED")]
    assert proc.returncode == 0 and not failed and len(lines) == len(names), "\n".join(failed) + proc.stderr[-5000:]
    return sorted({tuple(edge) for line in lines for edge in json.loads(line)})


def _env(root: pathlib.Path) -> dict[str, str]:
    # The tree under `root` comes first on the path, so it is the package that is read and run.
    return {**os.environ, "PYTHONPATH": str(root)}


def copy_of_package(tmp_path: pathlib.Path) -> pathlib.Path:
    shutil.copytree(REPO / PACKAGE, tmp_path / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_no_import_circle_in_the_source() -> None:
    edges = static_edges(REPO)
    assert len(edges) > 300
    found = circles(edges)
    assert not found, shown(found)


def test_no_import_circle_at_run_time() -> None:
    """Each module loaded alone, then a cycle with every action and plugin: what actually got
    imported, by whom, goes one way."""
    names = module_names(REPO)
    assert len(names) > 100
    edges = recorded_edges(REPO, [*names, "cycle"])
    assert ("reference_scheduler.scheduler.conf_load", "reference_scheduler.scheduler.plugins.factory") in edges
    found = circles(edges)
    assert not found, shown(found)


def test_a_circle_is_found_in_the_source(tmp_path: pathlib.Path) -> None:
    """The check itself: conf importing the plugins' factory closes a circle through the session."""
    root = copy_of_package(tmp_path)
    conf_py = root / PACKAGE / "scheduler" / "conf.py"
    conf_py.write_text(conf_py.read_text() + "\nfrom reference_scheduler.scheduler.plugins import factory  # noqa: E402\n")
    found = circles(static_edges(root))
    assert any("reference_scheduler.scheduler.conf" in c and "reference_scheduler.scheduler.plugins.factory" in c for c in found), found


def test_a_circle_hidden_behind_importlib_is_found_at_run_time(tmp_path: pathlib.Path) -> None:
    """The check itself: the dodge the registry once used (import the factories by name, at run
    time, from below them) is invisible to the source check and caught by the recording one."""
    root = copy_of_package(tmp_path)
    conf_py = root / PACKAGE / "scheduler" / "conf.py"
    conf_py.write_text(conf_py.read_text() + (
        "\n\nimport importlib  # noqa: E402\n"
        "_unmarshal = unmarshal\n\n\n"
        "def unmarshal(text: str) -> tuple[Conf, list[str]]:  # noqa: F811\n"
        "    importlib.import_module('reference_scheduler.scheduler.plugins.factory')\n"
        "    return _unmarshal(text)\n"
    ))
    assert not circles(static_edges(root))
    found = circles(recorded_edges(root, ["reference_scheduler.scheduler.conf", "cycle"]))
    assert any("reference_scheduler.scheduler.conf" in c and "reference_scheduler.scheduler.plugins.factory" in c for c in found), found


def test_reading_a_conf_loads_no_plugin_and_no_registry() -> None:
    """conf.py is types and defaults: parsing Volcano's default conf, with names it does not
    check, loads no other module of the reference."""
    script = (
        "import sys\n"
        "from reference_scheduler.scheduler import conf\n"
        "conf.parse(conf.DEFAULT_CONF)\n"
        "assert conf.parse('actions: teleport').actions == ('teleport',)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('reference_scheduler'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["reference_scheduler", "reference_scheduler.scheduler", "reference_scheduler.scheduler.conf"]


def test_circles_are_found() -> None:
    assert circles([("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]) == [["a", "b", "c"]]
    assert circles([("a", "b"), ("b", "c")]) == []
