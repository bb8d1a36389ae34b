"""YAML with the line of every node, so a problem can say where it is (`file:12: nodes[0].gpus...`).

fake_devices keeps its own small copy of what the kit's scenario loader does: it must not import
the kit (a device plugin image carries this package alone).
"""

from __future__ import annotations

from typing import Any, Sequence

import yaml

Path = tuple[Any, ...]


class YamlError(ValueError):
    """Text that is not one YAML document; `line` is 1-based, 0 when unknown."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        super().__init__(message)


class Positions:
    """The line of every node by its path in the document, and the keys written twice."""

    def __init__(self) -> None:
        self.at: dict[Path, int] = {}
        self.duplicates: list[tuple[Path, str, int]] = []

    def line(self, path: Sequence[Any]) -> int:
        """The line of `path`, or of its nearest ancestor the document has."""
        key = tuple(path)
        while key and key not in self.at:
            key = key[:-1]
        return self.at.get(key, 1)


def _walk(node: yaml.Node, path: Path, pos: Positions) -> None:
    pos.at[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                pos.duplicates.append((path, key, key_node.start_mark.line + 1))
            seen.add(key)
            _walk(value_node, (*path, key), pos)
            # A key's line is where the key is written, which is where an author looks.
            pos.at[(*path, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, (*path, i), pos)


def parse(text: str) -> tuple[Any, Positions]:
    """The one document in `text` and its positions; YamlError when it is not one YAML document."""
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        doc = yaml.safe_load(text) if len(nodes) == 1 else None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        raise YamlError(mark.line + 1 if mark else 0, f"not valid YAML: {err.problem or err}") from None
    except yaml.YAMLError as err:
        raise YamlError(0, f"not valid YAML: {err}") from None
    if not nodes:
        raise YamlError(1, "the file is empty")
    if len(nodes) > 1:
        raise YamlError(nodes[1].start_mark.line + 1, "holds more than one YAML document; put one per file")
    pos = Positions()
    _walk(nodes[0], (), pos)
    return doc, pos


def format_path(path: Sequence[Any]) -> str:
    """`nodes[0].gpus.links[2][5]`: how a path is written in every message."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
