"""volcano-scheduler.conf: the file and format vc-scheduler reads, with defaults applied at load.

Upstream: pkg/scheduler/conf/scheduler_conf.go, pkg/scheduler/util/scheduler_helper.go (defaults).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import yaml

from reference_scheduler.scheduler.actions import factory as action_factory
from reference_scheduler.scheduler.plugins import factory as plugin_factory

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


def hierarchy_enabled(tiers: tuple[tuple[PluginOption, ...], ...], name: str) -> bool:
    """Whether the first entry of the plugin in the tiers says `enableHierarchy: true`.
    Upstream: Session.HierarchyEnabled."""
    return next((option.hierarchy for tier in tiers for option in tier if option.name == name), False)


def parse(text: str) -> Conf:
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        raise ConfError(f"the scheduler conf is not valid YAML: {err}") from err
    if not isinstance(doc, dict):
        raise ConfError("the scheduler conf should be a mapping with `actions` and `tiers`")
    actions = tuple(a.strip() for a in str(doc.get("actions", "")).split(",") if a.strip())
    problems = [f"unknown action {a!r}; known: {', '.join(action_factory.NAMES)}" for a in actions if a not in action_factory.NAMES]
    tiers = []
    for i, tier in enumerate(doc.get("tiers") or []):
        options = []
        for plugin in (tier or {}).get("plugins") or []:
            name = plugin.get("name") if isinstance(plugin, dict) else None
            if name not in plugin_factory.NAMES:
                problems.append(f"tiers[{i}]: unknown plugin {name!r}; known: {', '.join(plugin_factory.NAMES)}")
                continue
            disabled = frozenset(k[len("enable"):].lower() for k, v in plugin.items() if k.startswith("enable") and v is False)
            options.append(PluginOption(name, plugin.get("arguments") or {}, disabled, plugin.get("enableHierarchy") is True))
        tiers.append(tuple(options))
    if not actions:
        problems.append("`actions` is empty; for example: actions: \"enqueue, allocate, backfill\"")
    if problems:
        raise ConfError("; ".join(problems))
    return Conf(actions, tuple(tiers))


def load(path: str | None) -> Conf:
    if not path:
        return parse(DEFAULT_CONF)
    try:
        with open(path) as stream:
            return parse(stream.read())
    except OSError as err:
        raise ConfError(f"cannot read the scheduler conf {path}: {err.strerror}") from err
