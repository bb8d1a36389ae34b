"""volcano-scheduler.conf: the file and format vc-scheduler reads, with defaults applied at load.

Upstream: pkg/scheduler/conf/scheduler_conf.go, pkg/scheduler/util/scheduler_helper.go (defaults).
Types and defaults only, importing nothing of the scheduler: this module reads a conf's shape; the
names of its actions and plugins are checked one level up, where the scheduler loads the conf
(conf_load.py), as Volcano's UnmarshalSchedulerConf looks them up with framework.GetAction.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, TypeVar

import yaml

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


# What an action's argument may be: the type of the default it is read with.
Scalar = TypeVar("Scalar", bool, int, float, str)


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

    def action_argument(self, action: str, key: str, default: Scalar) -> Scalar:
        """An action's argument when given with the type of `default` (a YAML bool for a bool),
        else `default`: upstream ignores, with a warning, an argument of another type.
        Upstream: GetArgOfActionFromConf, Arguments.GetBool/GetInt."""
        value = self.action_arguments.get(action, {}).get(key, default)
        # Exactly the default's type: a YAML true is no integer here, though bool is one in Python.
        if type(value) is type(default):
            return value
        return default


def unmarshal(text: str) -> tuple[Conf, list[str]]:
    """The conf as written, and what is wrong with its shape (in the file's order; empty when
    nothing is). Names are kept as written, known or not. Text that is not YAML, or not a mapping,
    raises: there is no conf to speak of."""
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as err:
        raise ConfError(f"the scheduler conf is not valid YAML: {err}") from err
    if not isinstance(doc, dict):
        raise ConfError("the scheduler conf should be a mapping with `actions` and `tiers`")
    actions = tuple(a.strip() for a in str(doc.get("actions", "")).split(",") if a.strip())
    problems = []
    tiers = []
    for i, tier in enumerate(doc.get("tiers") or []):
        options = []
        for j, plugin in enumerate((tier or {}).get("plugins") or []):
            name = plugin.get("name") if isinstance(plugin, dict) else None
            if not isinstance(name, str):
                problems.append(f"tiers[{i}].plugins[{j}]: expected a mapping with a plugin's `name`, got {plugin!r}; for example: - name: gang")
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
    return Conf(actions, tuple(tiers), action_arguments), problems


def parse(text: str) -> Conf:
    """The conf, when its shape is right (every problem in one ConfError otherwise). Its names are
    not checked here: conf_load.parse does, for the scheduler."""
    configuration, problems = unmarshal(text)
    if problems:
        raise ConfError("; ".join(problems))
    return configuration


def read(path: str) -> str:
    try:
        with open(path) as stream:
            return stream.read()
    except OSError as err:
        raise ConfError(f"cannot read the scheduler conf {path}: {err.strerror}") from err


def load(path: str | None) -> Conf:
    """The conf file's conf (Volcano's default conf without a path), its shape checked."""
    return parse(read(path) if path else DEFAULT_CONF)
