"""volcano-scheduler.conf: the file and format vc-scheduler reads, with defaults applied at load.

Upstream: pkg/scheduler/conf/scheduler_conf.go, pkg/scheduler/util/scheduler_helper.go (defaults).
Data only: names are checked against the framework's registry, never by importing a plugin.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import yaml

from reference_scheduler.scheduler.framework import registry

DEFAULT_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


class ConfError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class PluginOption:
    name: str
    arguments: Mapping[str, Any]
    # Extension points switched off by `enableXxx: false` (Volcano's enabled flags).
    disabled: frozenset[str]
    # `enableHierarchy: true`: drf and capacity then work on the queue hierarchy (off unless said).
    hierarchy: bool = False

    def enabled(self, point: str) -> bool:
        return point not in self.disabled


@dataclasses.dataclass(frozen=True)
class Conf:
    actions: tuple[str, ...]
    tiers: tuple[tuple[PluginOption, ...], ...]
    # `configurations`: arguments of an action by its name (preempt's
    # enableTopologyAwarePreemption). Upstream: SchedulerConfiguration.Configurations.
    action_arguments: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)

    def action_argument(self, action: str, key: str, default: Any) -> Any:
        """An action's argument when given with the type of `default` (a YAML bool for a bool),
        else `default`: upstream ignores, with a warning, an argument of another type.
        Upstream: GetArgOfActionFromConf, Arguments.GetBool/GetInt."""
        value = self.action_arguments.get(action, {}).get(key, default)
        return value if type(value) is type(default) else default


def parse(text: str) -> Conf:
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        raise ConfError(f"the scheduler conf is not valid YAML: {err}") from err
    if not isinstance(doc, dict):
        raise ConfError("the scheduler conf should be a mapping with `actions` and `tiers`")
    actions = tuple(a.strip() for a in str(doc.get("actions", "")).split(",") if a.strip())
    known_actions, known_plugins = registry.action_names(), registry.plugin_names()
    problems = [f"unknown action {a!r}; known: {', '.join(known_actions)}" for a in actions if a not in known_actions]
    tiers = []
    for i, tier in enumerate(doc.get("tiers") or []):
        options = []
        for plugin in (tier or {}).get("plugins") or []:
            name = plugin.get("name") if isinstance(plugin, dict) else None
            if name not in known_plugins:
                problems.append(f"tiers[{i}]: unknown plugin {name!r}; known: {', '.join(known_plugins)}")
                continue
            disabled = frozenset(k[len("enable"):].lower() for k, v in plugin.items() if k.startswith("enable") and v is False)
            options.append(PluginOption(name, plugin.get("arguments") or {}, disabled, plugin.get("enableHierarchy") is True))
        tiers.append(tuple(options))
    if not actions:
        problems.append("`actions` is empty; for example: actions: \"enqueue, allocate, backfill\"")
    action_arguments: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(doc.get("configurations") or []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            problems.append(f"configurations[{i}]: should be a mapping with a `name` and `arguments`")
            continue
        # As upstream, the first entry for an action is the one read.
        action_arguments.setdefault(entry["name"], dict(entry.get("arguments") or {}))
    if problems:
        raise ConfError("; ".join(problems))
    return Conf(actions, tuple(tiers), action_arguments)


def load(path: str | None) -> Conf:
    if not path:
        return parse(DEFAULT_CONF)
    try:
        with open(path) as stream:
            return parse(stream.read())
    except OSError as err:
        raise ConfError(f"cannot read the scheduler conf {path}: {err.strerror}") from err
