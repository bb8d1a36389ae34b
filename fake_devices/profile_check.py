"""Every problem with a device profile document: the JSON Schema first, then what a schema cannot
say (a GPU on a NUMA node the server does not have, a link matrix of the wrong shape, a HyperNode
member that does not exist).

Problems carry their path inside the profile; whoever knows the file (profile.load_stream, or the
kit's scenario loader for an inline profile) adds the file and line. Each message says what was
expected and what was found.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import pathlib
import re
from typing import Any, Mapping, Sequence

import jsonschema

from fake_devices import profile_layout, quantity

SCHEMA_PATH = pathlib.Path(__file__).with_name("profile.schema.json")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclasses.dataclass(frozen=True)
class Problem:
    path: tuple[Any, ...]  # inside the profile document: ("nodes", 0, "gpus", "numa", 3)
    message: str


@functools.lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return dict(json.loads(SCHEMA_PATH.read_text()))


@functools.lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


def _got(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _schema_message(err: jsonschema.ValidationError) -> tuple[tuple[Any, ...], str, tuple[Any, ...]]:
    """The path to report, the message, and the path the problem makes untrustworthy (a missing
    key spoils only that key, not its whole mapping)."""
    path, value = tuple(err.absolute_path), err.instance
    sch: Mapping[str, Any] = err.schema if isinstance(err.schema, Mapping) else {}
    wanted_value: Any = err.validator_value
    kind = err.validator
    if kind == "required":
        missing = [k for k in wanted_value if isinstance(value, dict) and k not in value]
        return path, f"missing required key {missing[0]!r}" if missing else err.message, (*path, *missing[:1])
    if kind == "additionalProperties":
        allowed = sorted((sch.get("properties") or {}).keys())
        extra = sorted(set(value) - set(allowed)) if isinstance(value, dict) else []
        where = (*path, *extra[:1])
        return where, f"unknown key {extra[0]!r}; expected one of: {', '.join(allowed)}" if extra else err.message, where
    if kind == "type":
        wanted = wanted_value if isinstance(wanted_value, str) else " or ".join(wanted_value)
        article = "an" if wanted[0] in "aeiou" else "a"
        floor = f" >= {sch['minimum']}" if "minimum" in sch else ""
        return path, f"expected {article} {wanted}{floor}, got {_got(value)}", path
    if kind == "enum":
        return path, f"expected one of {', '.join(map(str, wanted_value))}, got {_got(value)}", path
    if kind in ("pattern", "oneOf", "maxLength") and sch.get("description"):
        return path, f"expected {sch['description']}, got {_got(value)}", path
    if kind == "minimum":
        return path, f"expected a number >= {wanted_value}, got {_got(value)}", path
    if kind == "minItems":
        return path, f"expected at least {wanted_value} item{'s' if wanted_value != 1 else ''}, got {_got(value)}", path
    if kind == "minLength":
        return path, f"expected a non-empty string, got {_got(value)}", path
    return path, err.message, path


def _schema_check(doc: Any) -> tuple[list[Problem], list[tuple[Any, ...]]]:
    problems: list[Problem] = []
    spoiled: list[tuple[Any, ...]] = []
    for err in sorted(_validator().iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        path, message, spoils = _schema_message(err)
        if Problem(path, message) not in problems:
            problems.append(Problem(path, message))
            spoiled.append(spoils)
    return problems, spoiled


def schema_problems(doc: Any) -> list[Problem]:
    return _schema_check(doc)[0]


class _Sound:
    """Which parts of the document the schema found well formed. A cross-check reads only those:
    a part with a schema problem, inside one or holding one, cannot be trusted."""

    def __init__(self, spoiled: Sequence[tuple[Any, ...]]) -> None:
        self.spoiled = list(spoiled)

    def __call__(self, *paths: tuple[Any, ...]) -> bool:
        return not any(b[: len(p)] == p or p[: len(b)] == b for p in paths for b in self.spoiled)


def problems(doc: Any) -> list[Problem]:
    """Every problem in a profile document: the schema's, then the cross-checks of every part the
    schema found well formed."""
    if not isinstance(doc, dict):
        return [Problem((), f"expected a mapping with name and nodes, got {type(doc).__name__}")]
    found, spoiled = _schema_check(doc)
    sound = _Sound(spoiled)
    groups = doc["nodes"] if isinstance(doc.get("nodes"), list) else []
    for i, group in enumerate(groups):
        if isinstance(group, dict):
            found += _group_problems(group, ("nodes", i), sound)
    if groups and all(isinstance(g, dict) and sound(("nodes", i, "prefix"), ("nodes", i, "count")) for i, g in enumerate(groups)):
        found += _tier_problems(doc, [n for names in profile_layout.node_names(groups) for n in names], sound)
    return found


def _group_problems(group: Mapping[str, Any], at: tuple[Any, ...], sound: _Sound) -> list[Problem]:
    out: list[Problem] = []
    numa_count = 0  # 0: the node's NUMA nodes are unknown, so what depends on them is not checked
    if group.get("numa") and ("cpu" in group or "memory" in group):
        key = "cpu" if "cpu" in group else "memory"
        out.append(Problem((*at, key), "give either numa (CPUs and memory per NUMA node) or cpu and memory (one NUMA node), not both"))
    elif sound((*at, "numa"), (*at, "cpu"), (*at, "memory")):
        numa = profile_layout.numa_nodes(group)
        numa_count = len(numa)
        cpus, memory = sum(c for c, _ in numa), sum(m for _, m in numa)
        written = group.get("reserved")
        reserved: Mapping[str, Any] = written if isinstance(written, dict) else {}
        if sound((*at, "reserved", "cpu")) and int(reserved.get("cpu", 0)) >= cpus:
            out.append(Problem((*at, "reserved", "cpu"), f"expected fewer than the node's {cpus} CPUs, got {reserved['cpu']}"))
        if sound((*at, "reserved", "memory")) and "memory" in reserved and quantity.bytes_of(reserved["memory"]) >= memory:
            out.append(Problem((*at, "reserved", "memory"), f"expected less than the node's {quantity.format_bytes(memory)} of memory, got {_got(reserved['memory'])}"))
    if sound((*at, "prefix"), (*at, "count")):
        names = profile_layout.node_names([group])[0]
        if names and len(names[-1]) > 63:
            out.append(Problem((*at, "prefix"), f"expected a prefix short enough for node names of at most 63 characters, got {names[-1]!r}"))
    if isinstance(group.get("gpus"), dict) and sound((*at, "gpus", "count")):
        out += _gpu_problems(group["gpus"], numa_count, (*at, "gpus"), sound)
    return out


def _gpu_problems(gpus: Mapping[str, Any], numa_count: int, at: tuple[Any, ...], sound: _Sound) -> list[Problem]:
    out: list[Problem] = []
    count = int(gpus["count"])
    if "numa" in gpus and sound((*at, "numa")):
        if len(gpus["numa"]) != count:
            out.append(Problem((*at, "numa"), f"expected one NUMA node per GPU ({count} entries), got {len(gpus['numa'])}"))
        for i, node in enumerate(gpus["numa"]):
            if numa_count and node >= numa_count:
                out.append(Problem((*at, "numa", i), f"expected a NUMA node of this server (0 to {numa_count - 1}), got {node}"))
    if "memory" in gpus and sound((*at, "memory")) and quantity.bytes_of(gpus["memory"]) < quantity.MIB:
        out.append(Problem((*at, "memory"), f"expected at least 1Mi of GPU memory, got {_got(gpus['memory'])}"))
    if isinstance(gpus.get("links"), list) and sound((*at, "links")):
        out += _matrix_problems(gpus["links"], count, (*at, "links"))
    if "vgpu" in gpus and "memory" not in gpus:
        out.append(Problem((*at, "vgpu"), "a vGPU device plugin registers each GPU's memory: give the GPUs a memory"))
    seen: set[int] = set()
    for i, index in enumerate(gpus.get("unhealthy") or [] if sound((*at, "unhealthy")) else []):
        if index >= count:
            out.append(Problem((*at, "unhealthy", i), f"expected a GPU index from 0 to {count - 1}, got {index}"))
        elif index in seen:
            out.append(Problem((*at, "unhealthy", i), f"GPU {index} is listed twice; list each unhealthy GPU once"))
        seen.add(index)
    return out


def _matrix_problems(links: Sequence[Sequence[int]], count: int, at: tuple[Any, ...]) -> list[Problem]:
    if len(links) != count:
        return [Problem(at, f"expected a {count}x{count} matrix (one row per GPU), got {len(links)} rows")]
    out = [Problem((*at, i), f"expected {count} scores (one per GPU), got {len(row)}") for i, row in enumerate(links) if len(row) != count]
    if out:
        return out
    for i in range(count):
        for j in range(i + 1, count):
            if links[i][j] != links[j][i]:
                out.append(Problem((*at, i, j), f"expected the same score as links[{j}][{i}] ({links[j][i]}): a link scores the same both ways, got {links[i][j]}"))
    return out


def _tier_problems(doc: Mapping[str, Any], nodes: list[str], sound: _Sound) -> list[Problem]:
    out: list[Problem] = []
    below, what = nodes, "a node of this profile"
    all_names: set[str] = set()
    tiers = doc["tiers"] if isinstance(doc.get("tiers"), list) else []
    for k, tier in enumerate(tiers):
        at: tuple[Any, ...] = ("tiers", k)
        if not sound(at):
            break  # the schema refused this tier: the tiers above cannot be named, so stop here
        if tier["tier"] != k + 1:
            out.append(Problem((*at, "tier"), f"expected {k + 1} (tiers count up from 1, one entry each, lowest first), got {tier['tier']}"))
        if tier.get("hyperNodes") and ("size" in tier or "prefix" in tier):
            out.append(Problem((*at, "size" if "size" in tier else "prefix"), "give either hyperNodes (each with its members) or size and prefix (members taken in order), not both"))
            break
        hypernodes = profile_layout.tier_hypernodes(tier, below)
        owner: dict[str, str] = {}
        known = set(below)
        for h, (name, members) in enumerate(hypernodes):
            name_at = (*at, "hyperNodes", h, "name") if tier.get("hyperNodes") else (*at, "prefix")
            if name in all_names:
                out.append(Problem(name_at, f"HyperNode name {name!r} is used twice; HyperNode names must be unique"))
            elif len(name) > 63 or not _DNS_LABEL.match(name):
                out.append(Problem(name_at, f"expected HyperNode names that are DNS-1123 labels of at most 63 characters, got {name!r}"))
            all_names.add(name)
            for m, member in enumerate(members):
                member_at = (*at, "hyperNodes", h, "members", m)
                if member not in known:
                    out.append(Problem(member_at, f"expected {what}, got {member!r}"))
                elif member in owner:
                    out.append(Problem(member_at, f"{member!r} is already a member of HyperNode {owner[member]!r} in this tier; a member belongs to one HyperNode per tier"))
                owner.setdefault(member, name)
        below, what = [name for name, _ in hypernodes], f"a HyperNode of tier {k + 1}"
    supernode_tier = doc.get("supernodeTier")
    if supernode_tier is not None and sound(("supernodeTier",), ("tiers",)) and supernode_tier > len(tiers):
        allowed = f"one of the profile's tiers (1 to {len(tiers)})" if tiers else "a tier, but the profile has no tiers"
        out.append(Problem(("supernodeTier",), f"expected {allowed}, got {supernode_tier}"))
    return out
