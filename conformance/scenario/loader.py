"""Loading scenarios: YAML with line numbers, the JSON Schema, then the typed model.

Every problem in a file is reported (not only the first), each as
`path/to/file.yaml:12: steps[2].wait.pods.count: expected an integer >= 0, got 'two'`.
Bad input never produces a traceback: anything unexpected becomes a Problem naming the file.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import pathlib
from typing import IO, Any, Iterable, Sequence, cast

import jsonschema
import yaml

from conformance import data
from conformance.scenario import models, profiles, references, semantics

log = logging.getLogger(__name__)
SCHEMA_PATH = data.kit("scenario", "scenario.schema.json")
# A scenario is a few KiB and a few hundred YAML nodes (the largest shipped: 10 KiB, 904 nodes).
# Larger files are refused before parsing, and documents whose aliases expand past MAX_NODES
# (a "billion laughs" bomb) before anything walks them.
MAX_BYTES = 512 * 1024
MAX_NODES = 100_000
Path = tuple[Any, ...]
ERROR = "error"
WARNING = "warning"


@dataclasses.dataclass(frozen=True)
class Problem:
    file: str
    path: str  # inside the document: steps[2].wait.pods.count ("" for the whole document)
    line: int  # 1-based; 0 when unknown
    message: str
    column: int = 0
    severity: str = ERROR  # a WARNING is shown but refuses nothing

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        if not self.is_error:
            where += f": {self.severity}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class ScenarioError(Exception):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@functools.lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(SCHEMA_PATH.read_text()))


@functools.lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


def format_path(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# --- YAML with positions --------------------------------------------------------------------------
class _Positions:
    """Line and column of every node, by its path in the document."""

    def __init__(self) -> None:
        self.at: dict[Path, tuple[int, int]] = {}
        self.duplicates: list[tuple[Path, str, int]] = []

    def line(self, path: Sequence[Any]) -> tuple[int, int]:
        path = tuple(path)
        while path and path not in self.at:
            path = path[:-1]
        return self.at.get(path, (1, 1))


def _walk(node: yaml.Node, path: Path, pos: _Positions) -> None:
    pos.at[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            # A key that is itself a mapping or a list (`{{}: x}`) cannot be one in a scenario;
            # constructing the document reports it, and its position goes under a stand-in.
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else f"<{key_node.id} key>"
            if key in seen:
                pos.duplicates.append((path, key, key_node.start_mark.line + 1))
            seen.add(key)
            pos.at[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            _walk(value_node, (*path, key), pos)
            pos.at[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), pos)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_expansion(root: yaml.Node, name: str) -> None:
    """Refuse a document whose aliases would expand it past MAX_NODES, or into itself. An alias is
    the very node its anchor names, so each node's expanded size is counted once (no expanding)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # being counted: the path from the root to the current node
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, counted_children = stack.pop()
        if counted_children:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[id(node)] > MAX_NODES:
                raise ScenarioError([Problem(name, "", node.start_mark.line + 1, f"YAML aliases expand the document past {MAX_NODES} nodes here (an alias bomb?); a scenario is a few hundred nodes: write it out or use fewer aliases")])
            continue
        if id(node) in sizes:
            continue
        open_nodes.add(id(node))
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                raise ScenarioError([Problem(name, "", child.start_mark.line + 1, "a YAML alias refers to a node that contains it; a scenario cannot contain itself")])
            stack.append((child, False))


# libyaml's parser where PyYAML was built with it (its wheels are): it reads the scenario tree
# several times faster than the pure-Python one, with the same marks and the same safe types.
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse(text: str, name: str) -> tuple[Any, _Positions]:
    """Parse once: the node tree gives the positions and the expansion check, and the document is
    constructed from that same tree."""
    loader = _YAML_LOADER(text)
    try:
        try:
            nodes = []
            while loader.check_node():
                nodes.append(loader.get_node())
        except yaml.MarkedYAMLError as err:
            mark = err.problem_mark or err.context_mark
            line = mark.line + 1 if mark else 0
            raise ScenarioError([Problem(name, "", line, f"not valid YAML: {err.problem or err}")]) from None
        except yaml.YAMLError as err:
            raise ScenarioError([Problem(name, "", 0, f"not valid YAML: {err}")]) from None
        if not nodes:
            raise ScenarioError([Problem(name, "", 1, "the file is empty; a scenario is a YAML mapping with id, suite, title, level, cites and steps")])
        if len(nodes) > 1:
            raise ScenarioError([Problem(name, "", nodes[1].start_mark.line + 1, "holds more than one YAML document; put one scenario per file")])
        _check_expansion(nodes[0], name)
        pos = _Positions()
        _walk(nodes[0], (), pos)
        try:
            doc = loader.construct_document(nodes[0])
        except yaml.YAMLError as err:  # e.g. an unhashable key, which composing accepts
            raise ScenarioError([Problem(name, "", 0, f"not valid YAML: {err}")]) from None
    finally:
        loader.dispose()
    return doc, pos


# --- schema messages --------------------------------------------------------------------------------
def _got(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _keys_of(schema_part: dict[str, Any]) -> list[str]:
    keys = []
    for alt in schema_part.get("oneOf", []):
        keys += alt.get("required", [])[:1]
    return keys


def _message(err: jsonschema.ValidationError) -> tuple[list[Any], str]:
    """A readable message for one schema error, and the path it belongs at."""
    path = list(err.absolute_path)
    validator, value, sch = err.validator, err.instance, err.schema
    if validator == "oneOf":
        keys = _keys_of(sch)
        if keys and isinstance(value, dict):
            present = [k for k in keys if k in value]
            if len(present) == 1 and err.context:
                # Descend into the alternative the author meant and report its first problem.
                relevant = [e for e in err.context if list(e.schema_path)[:1] == [keys.index(present[0])]]
                if relevant:
                    inner = min(relevant, key=lambda e: len(list(e.absolute_path)))
                    inner_path, inner_msg = _message(inner)
                    return inner_path, inner_msg
            got = ", ".join(sorted(map(str, value))) or "nothing"
            return path, f"expected exactly one of: {', '.join(keys)} (got: {got})"
        if sch.get("description"):
            return path, f"expected {sch['description']}, got {_got(value)}"
        if err.context:
            best = jsonschema.exceptions.best_match(err.context)
            return _message(best)
        return path, f"{_got(value)} matches none of the allowed forms"
    if validator == "required":
        # jsonschema reports each missing key as its own error: "'title' is a required property".
        key = err.message.split("'")[1] if err.message.count("'") >= 2 else err.message
        return path, f"missing required key {key!r}"
    if validator == "additionalProperties":
        allowed = sorted((sch.get("properties") or {}).keys())
        extra = sorted(set(value) - set(allowed)) if isinstance(value, dict) else []
        return path + extra[:1], f"unknown key {extra[0]!r}; expected one of: {', '.join(allowed)}" if extra else err.message
    if validator == "type":
        wanted = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        article = "an" if wanted[0] in "aeiou" else "a"
        bound = f" >= {sch['minimum']}" if "minimum" in sch else ""
        return path, f"expected {article} {wanted}{bound}, got {_got(value)}"
    if validator == "pattern":
        if "(ms|s|m|h)" in err.validator_value:
            return path, f"expected a duration such as 30s, 500ms, 2m or 1.5h, got {_got(value)}"
        return path, f"{_got(value)} does not have the expected form ({sch.get('description') or err.validator_value})"
    if validator == "enum":
        hint = semantics.closest(value, [str(v) for v in err.validator_value]) if isinstance(value, str) else ""
        return path, f"expected one of {', '.join(map(str, err.validator_value))}, got {_got(value)}{hint}"
    if validator in ("minimum", "maximum"):
        return path, f"expected a number {'>=' if validator == 'minimum' else '<='} {err.validator_value}, got {_got(value)}"
    if validator in ("minItems", "minLength", "minProperties"):
        return path, f"must not be empty (got {_got(value)})"
    if validator == "maxItems":
        return path, f"expected at most {err.validator_value} items, got {_got(value)}"
    if validator == "dependentRequired":
        # "'since' is a dependency of 'between'": the key present, and the one it needs.
        needed = [k for keys in err.validator_value.values() for k in keys if isinstance(value, dict) and k not in value]
        given = [k for k, keys in err.validator_value.items() if isinstance(value, dict) and k in value and set(keys) & set(needed)]
        return path + given[:1], f"{given[0] if given else 'this key'} needs {', '.join(needed)} beside it" if needed else err.message
    return path, err.message


def _schema_problems(doc: Any, pos: _Positions, name: str) -> list[Problem]:
    problems = []
    for err in sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        path, message = _message(err)
        line, column = pos.line(path)
        problem = Problem(name, format_path(path), line, message, column)
        if problem not in problems:
            problems.append(problem)
    return problems


def _profile_problems(doc: dict[str, Any], pos: _Positions, name: str) -> list[Problem]:
    """The device profile's problems (fake_devices checks it), at this file's lines."""
    cluster = doc.get("cluster")
    try:
        plain = [models.node_group(g) for g in cluster.get("nodes") or []] if isinstance(cluster, dict) else []
    except (ValueError, KeyError, TypeError, AttributeError):
        plain = []  # the schema reports what is wrong with them
    return [Problem(name, format_path(path), pos.line(path)[0], message, pos.line(path)[1]) for path, message in profiles.problems(doc, plain)]


def _semantic_problems(doc: dict[str, Any], pos: _Positions, name: str, findings: list[semantics.Finding]) -> list[Problem]:
    """What the document means that its shape cannot say (conformance.scenario.semantics)."""
    out = []
    for found in findings:
        line, column = pos.line(found.path)
        out.append(Problem(name, format_path(found.path), line, found.message, column, WARNING if found.warning else ERROR))
    return sorted(out, key=lambda p: (p.line, p.column))


# --- loading ------------------------------------------------------------------------------------------
def read_stream(stream: IO[str] | IO[bytes], name: str, folder_suite: str | None = None) -> tuple[models.Scenario, list[Problem]]:
    """The scenario in `stream` and its warnings; ScenarioError listing every problem (its warnings
    too) when any is an error."""
    try:
        raw = stream.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise ScenarioError([Problem(name, "", 0, f"the file is larger than {MAX_BYTES // 1024} KiB, too large for a scenario; refused before parsing")])
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as err:
        raise ScenarioError([Problem(name, "", 0, f"not UTF-8 text: {err}")]) from None
    doc, pos = _parse(text, name)
    problems = [Problem(name, format_path(p), line, f"duplicate key {key!r} (YAML keeps only the last)") for p, key, line in pos.duplicates]
    if not isinstance(doc, dict):
        raise ScenarioError([*problems, Problem(name, "", 1, f"expected a mapping with id, suite, title, level, cites and steps, got {type(doc).__name__}")])
    schema_problems = _schema_problems(doc, pos, name)
    problems += schema_problems
    problems += _profile_problems(doc, pos, name)
    problems += _semantic_problems(doc, pos, name, semantics.findings(doc) + references.findings(doc))
    if not schema_problems:
        problems += _semantic_problems(doc, pos, name, semantics.nothing_judged(doc))
        problems += [Problem(name, format_path(path), pos.line(path)[0], message, pos.line(path)[1]) for path, message in models.measure_problems(doc)]
    problems += _suite_problems(doc, pos, name, folder_suite)
    if any(p.is_error for p in problems):
        raise ScenarioError(problems)
    try:
        return models.from_document(doc, pathlib.Path(name)), problems
    except (ValueError, KeyError, TypeError) as err:
        raise ScenarioError([Problem(name, "", 0, str(err))]) from None


def load_stream(stream: IO[str] | IO[bytes], name: str, folder_suite: str | None = None) -> models.Scenario:
    """The scenario in `stream` (its warnings aside); ScenarioError listing every problem found."""
    return read_stream(stream, name, folder_suite)[0]


def _folder_suite(path: pathlib.Path) -> str | None:
    """`scenarios/<suite>/file.yaml` (or deeper, `scenarios/<suite>/more/file.yaml`) says its suite
    by its folder under the nearest folder named `scenarios`; "" for a file in `scenarios/` itself;
    None outside a scenarios tree."""
    folders = path.parent.parts
    if "scenarios" not in folders:
        return None
    under = folders[len(folders) - folders[::-1].index("scenarios"):]
    return under[0] if under else ""


def _suite_problems(doc: dict[str, Any], pos: _Positions, name: str, folder_suite: str | None) -> list[Problem]:
    suite = doc.get("suite")
    if folder_suite is None or not isinstance(suite, str) or suite == folder_suite:
        return []
    if folder_suite == "":
        message = f"the file sits in scenarios/ itself; expected it in scenarios/{suite}/, the folder of its suite"
    else:
        message = f"the suite is {suite!r} but the file is in the folder of suite {folder_suite!r}; make them equal"
    line, column = pos.line(("suite",))
    return [Problem(name, "suite", line, message, column)]


def read_file(path: pathlib.Path) -> tuple[models.Scenario, list[Problem]]:
    """The scenario in the file and its warnings; ScenarioError when any problem is an error."""
    try:
        with open(path, "rb") as stream:
            return read_stream(stream, str(path), _folder_suite(path.resolve()))
    except ScenarioError:
        raise
    except OSError as err:
        raise ScenarioError([Problem(str(path), "", 0, f"cannot read: {err.strerror}")]) from None
    except Exception as err:  # never a traceback for bad input
        log.debug("loading %s failed", path, exc_info=True)
        raise ScenarioError([Problem(str(path), "", 0, f"could not be loaded: {err.__class__.__name__}: {err}")]) from None


def load_file(path: pathlib.Path) -> models.Scenario:
    return read_file(path)[0]


def scenario_files(paths: Sequence[pathlib.Path]) -> list[pathlib.Path]:
    files: list[pathlib.Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        else:
            files.append(path)
    return files


def load_tree(paths: Sequence[pathlib.Path]) -> tuple[list[models.Scenario], list[Problem]]:
    """Every scenario under `paths`, and every problem (bad files, ids used twice) and warning."""
    found: list[models.Scenario] = []
    problems: list[Problem] = []
    for path in scenario_files(paths):
        try:
            scenario, warnings = read_file(path)
            found.append(scenario)
            problems += warnings
        except ScenarioError as err:
            problems += err.problems
    by_id: dict[str, models.Scenario] = {}
    for sc in found:
        if sc.id in by_id:
            problems.append(Problem(str(sc.path), "id", 0, f"id {sc.id!r} is used by {by_id[sc.id].path} too; ids must be unique"))
        else:
            by_id[sc.id] = sc
    return found, problems
