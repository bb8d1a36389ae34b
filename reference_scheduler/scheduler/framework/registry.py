"""The names a scheduler conf may use, and what builds each: the framework owns the registries,
the plugins' and the actions' factories register into them (as Volcano's framework/plugins.go
holds the builders that plugins/factory.go and the action factory register).

The factories are imported on first use rather than at import time: this module sits under every
plugin and action (they import the framework), so importing them here at the top would close an
import circle. A program registers nothing by hand; `conf.parse` and the framework ask here.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping

from reference_scheduler.scheduler.framework import interface

PluginBuilder = Callable[[Mapping[str, Any]], interface.Plugin]
ActionBuilder = Callable[[], interface.Action]

_PLUGINS: dict[str, PluginBuilder] = {}
_ACTIONS: dict[str, ActionBuilder] = {}
# The modules whose import registers the built-in plugins and actions.
BUILTIN_FACTORIES = ("reference_scheduler.scheduler.plugins.factory", "reference_scheduler.scheduler.actions.factory")


class RegistryError(ValueError):
    pass


def register_plugin(name: str, builder: PluginBuilder) -> None:
    if name in _PLUGINS and _PLUGINS[name] is not builder:
        raise RegistryError(f"plugin {name!r} is registered twice")
    _PLUGINS[name] = builder


def register_action(name: str, builder: ActionBuilder) -> None:
    if name in _ACTIONS and _ACTIONS[name] is not builder:
        raise RegistryError(f"action {name!r} is registered twice")
    _ACTIONS[name] = builder


def _builtins() -> None:
    for module in BUILTIN_FACTORIES:
        importlib.import_module(module)


def plugin_names() -> tuple[str, ...]:
    _builtins()
    return tuple(_PLUGINS)


def action_names() -> tuple[str, ...]:
    _builtins()
    return tuple(_ACTIONS)


def plugin_builder(name: str) -> PluginBuilder:
    _builtins()
    return _PLUGINS[name]


def action_builder(name: str) -> ActionBuilder:
    _builtins()
    return _ACTIONS[name]
