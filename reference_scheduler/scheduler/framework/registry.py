"""The names a scheduler conf may use, and what builds each. The framework owns the registries;
the built-in plugins and actions are registered into them by their factories
(plugins/factory.py, actions/factory.py), which import them, and whoever loads a conf imports the
factories first (conf_load.py). Nothing here imports a plugin or an action: the framework sits
below them, and no import goes back up.

Upstream: pkg/scheduler/framework/plugins.go (RegisterPluginBuilder, GetPluginBuilder,
RegisterAction, GetAction), filled by the init functions of plugins/factory.go and the actions.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from reference_scheduler.scheduler.framework import interface

PluginBuilder = Callable[[Mapping[str, Any]], interface.Plugin]
ActionBuilder = Callable[[], interface.Action]

_PLUGINS: dict[str, PluginBuilder] = {}
_ACTIONS: dict[str, ActionBuilder] = {}


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


def plugin_names() -> tuple[str, ...]:
    return tuple(_PLUGINS)


def action_names() -> tuple[str, ...]:
    return tuple(_ACTIONS)


def plugin_builder(name: str) -> PluginBuilder:
    try:
        return _PLUGINS[name]
    except KeyError:
        raise RegistryError(f"no plugin {name!r} is registered (known: {', '.join(_PLUGINS) or 'none'}); load the conf through conf_load, which registers the built-in ones") from None


def action_builder(name: str) -> ActionBuilder:
    try:
        return _ACTIONS[name]
    except KeyError:
        raise RegistryError(f"no action {name!r} is registered (known: {', '.join(_ACTIONS) or 'none'}); load the conf through conf_load, which registers the built-in ones") from None
