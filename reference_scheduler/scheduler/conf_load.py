"""Where the scheduler loads its conf: conf.py reads the file's shape (types and defaults only);
here each action and plugin it names is checked against the framework's registries, so a conf
naming one the scheduler does not have never loads, and the error lists every unknown name with
the known ones.

The registries are filled by the built-in factories, imported here for that: this module is
where a conf meets the names, so whoever loads a conf (the scheduler's entry point, the profiler,
the tests) has every built-in action and plugin registered, and nothing below it needs to import
them. Upstream: UnmarshalSchedulerConf (pkg/scheduler/util.go) looks actions up with
framework.GetAction; cmd/scheduler/main.go imports the actions and plugins packages, whose init
functions register them.
"""

from __future__ import annotations

from reference_scheduler.scheduler import conf
from reference_scheduler.scheduler.actions import factory as actions_factory
from reference_scheduler.scheduler.framework import registry
from reference_scheduler.scheduler.plugins import factory as plugins_factory

# Imported for what importing them does: each registers its built-ins with the registry.
BUILTIN_FACTORIES = (actions_factory, plugins_factory)


def unknown_names(configuration: conf.Conf) -> list[str]:
    """Every action and plugin name the registries do not hold, actions first, in conf order."""
    known_actions, known_plugins = registry.action_names(), registry.plugin_names()
    problems = [f"unknown action {a!r}; known: {', '.join(known_actions)}" for a in configuration.actions if a not in known_actions]
    for i, tier in enumerate(configuration.tiers):
        problems += [f"tiers[{i}]: unknown plugin {o.name!r}; known: {', '.join(known_plugins)}" for o in tier if o.name not in known_plugins]
    return problems


def parse(text: str) -> conf.Conf:
    """The conf from its text, its names known: every problem, unknown names first, in one
    ConfError otherwise."""
    configuration, problems = conf.unmarshal(text)
    problems = unknown_names(configuration) + problems
    if problems:
        raise conf.ConfError("; ".join(problems))
    return configuration


def load(path: str | None) -> conf.Conf:
    """The conf file's conf (Volcano's default conf without a path), its names known."""
    return parse(conf.read(path) if path else conf.DEFAULT_CONF)
