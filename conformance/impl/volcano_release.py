"""What one Volcano release registers, read from its own source: the scheduler's actions and
plugins and the job controller's plugins. The `volcano` adapter claims these per release instead
of assuming v1.13's list (`volcano_capabilities.yaml`): v1.12 has no Ray job plugin, v1.15 adds
the gangpreempt and gangreclaim actions.

Where they are registered, upstream (the same files from v1.10 to v1.15):
- actions: pkg/scheduler/actions/factory.go, `framework.RegisterAction(<pkg>.New())`, each named
  by its `Name()` method;
- plugins: pkg/scheduler/plugins/factory.go, `framework.RegisterPluginBuilder(<pkg>.PluginName, ...)`,
  each package declaring its `PluginName` constant;
- job plugins: pkg/controllers/job/plugins/factory.go, `RegisterPluginBuilder("<name>", ...)`;
- controllers and admission webhooks: a folder each, pkg/controllers/<name> and
  pkg/webhooks/admission/<name>s.

The Go is read with regular expressions, not compiled: a layout this reader does not recognise
gives None, and the adapter then claims the file's list for those kinds.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
from typing import Callable

ACTIONS_FACTORY = "pkg/scheduler/actions/factory.go"
PLUGINS_FACTORY = "pkg/scheduler/plugins/factory.go"
JOB_PLUGINS_FACTORY = "pkg/controllers/job/plugins/factory.go"
# The capability kinds whose names come from the release's factories.
KINDS = ("action", "plugin", "jobplugin")
# The kinds whose claims in the file hold only where the release has the part's folder (v1.12 has
# no CronJob controller or webhook: they came with v1.13). The others stay as the file says.
FOLDERS = {"controller": "pkg/controllers/{}", "admission": "pkg/webhooks/admission/{}s"}
MODULE = "volcano.sh/volcano/"

_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:(\w+)\s+)?"' + re.escape(MODULE) + r'([^"]+)"', re.MULTILINE)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_PACKAGE = re.compile(r"^package\s+(\w+)", re.MULTILINE)
_REGISTERED_ACTION = re.compile(r"RegisterAction\(\s*(\w+)\.New\(")
_REGISTERED_PLUGIN = re.compile(r"RegisterPluginBuilder\(\s*(\w+)\.PluginName\b")
_REGISTERED_JOB_PLUGIN = re.compile(r'RegisterPluginBuilder\(\s*"([\w-]+)"')
_PLUGIN_NAME = re.compile(r'\bPluginName\s*=\s*"([^"]+)"')
_ACTION_NAME = re.compile(r'\)\s*Name\(\)\s*string\s*\{\s*return\s+("[^"]+"|\w+)\s*\}')


@dataclasses.dataclass(frozen=True)
class Registered:
    actions: frozenset[str]
    plugins: frozenset[str]
    job_plugins: frozenset[str]

    def claims(self) -> frozenset[str]:
        return frozenset(
            [f"action:{n}" for n in self.actions] + [f"plugin:{n}" for n in self.plugins] + [f"jobplugin:{n}" for n in self.job_plugins]
        )


def read(source: pathlib.Path) -> Registered | None:
    """The release's registrations, or None when a factory is missing, names nothing, or registers
    something this reader cannot name (every registration call must be understood)."""
    try:
        actions = _names(source, ACTIONS_FACTORY, _REGISTERED_ACTION, "RegisterAction(", _action_name)
        plugins = _names(source, PLUGINS_FACTORY, _REGISTERED_PLUGIN, "RegisterPluginBuilder(", _plugin_name)
        text = _code(source / JOB_PLUGINS_FACTORY)
        found = _REGISTERED_JOB_PLUGIN.findall(text)
        if len(found) != text.count("RegisterPluginBuilder(") - text.count("func RegisterPluginBuilder("):
            raise LookupError("a job plugin registered under a name this reader cannot read")
        job_plugins = frozenset(found)
    except (OSError, LookupError):
        return None
    if not (actions and plugins and job_plugins):
        return None
    return Registered(actions, plugins, job_plugins)


def claims(file_claims: frozenset[str], source: pathlib.Path | None) -> frozenset[str]:
    """The file's claims with its actions, plugins and job plugins replaced by what the release at
    `source` registers, and its controllers and webhooks kept where the release has them. Each part
    that cannot be read (a factory this reader does not understand, a tree without pkg/) leaves the
    file's claims of its kinds as they are."""
    if source is None:
        return file_claims
    registered = read(source)
    folders_known = (source / "pkg" / "controllers").is_dir() and (source / "pkg" / "webhooks" / "admission").is_dir()
    kept: set[str] = set()
    for claim in file_claims:
        kind, _, name = claim.partition(":")
        if registered is not None and kind in KINDS:
            continue
        if folders_known and kind in FOLDERS and not (source / FOLDERS[kind].format(name)).is_dir():
            continue
        kept.add(claim)
    return frozenset(kept | (registered.claims() if registered is not None else frozenset()))


def _code(path: pathlib.Path) -> str:
    """A Go file without its line comments (a registration commented out is not one)."""
    return _LINE_COMMENT.sub("", path.read_text())


def _names(source: pathlib.Path, factory: str, registered: re.Pattern[str], call: str, name_of: Callable[[pathlib.Path], str]) -> frozenset[str]:
    text = _code(source / factory)
    found = registered.findall(text)
    if len(found) != text.count(call):
        raise LookupError(f"{factory}: a registration this reader cannot read")
    packages = _imported_packages(source, text)
    # LookupError (KeyError) when a registration names a package this reader cannot place.
    return frozenset(name_of(packages[ident]) for ident in found)


def _imported_packages(source: pathlib.Path, factory_text: str) -> dict[str, pathlib.Path]:
    """Each imported package of the module by the identifier the factory uses for it: its alias,
    else its package clause (a folder such as network-topology-aware declares another name)."""
    found: dict[str, pathlib.Path] = {}
    for alias, path in _IMPORT.findall(factory_text):
        folder = source / path
        ident = alias or _package_name(folder)
        if ident:
            found[ident] = folder
    return found


def _package_name(folder: pathlib.Path) -> str | None:
    for go in _go_files(folder):
        clause = _PACKAGE.search(go.read_text())
        if clause:
            return clause.group(1)
    return None


def _go_files(folder: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in folder.glob("*.go") if not p.name.endswith("_test.go")) if folder.is_dir() else []


def _plugin_name(folder: pathlib.Path) -> str:
    for go in _go_files(folder):
        found = _PLUGIN_NAME.search(go.read_text())
        if found:
            return found.group(1)
    raise LookupError(f"no PluginName in {folder}")


def _action_name(folder: pathlib.Path) -> str:
    """The string an action's `Name()` returns: a literal, or a constant of its package."""
    texts = [go.read_text() for go in _go_files(folder)]
    for text in texts:
        found = _ACTION_NAME.search(text)
        if found is None:
            continue
        value = found.group(1)
        if value.startswith('"'):
            return value.strip('"')
        for other in texts:
            const = re.search(rf'\b{re.escape(value)}\s*=\s*"([^"]+)"', other)
            if const:
                return const.group(1)
    raise LookupError(f"no Name() in {folder}")
