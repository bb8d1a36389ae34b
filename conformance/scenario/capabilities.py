"""The capability names the kit knows, for warning about likely typos in a scenario's `requires` and
in the actions and plugins of its scheduler confs (`plugin:gnag` would make every run "not claimed").

Known are the names in the capability files the kit ships, read as data:
`reference_scheduler/capabilities.yaml` (the reference implementation's claims; the package is
found, never imported) and `conformance/impl/volcano_capabilities.yaml` (what Volcano v1.13
registers: every action and plugin of its factories, its controllers and job plugins). An unknown
name is only a warning: another implementation may claim a capability neither file names.
"""

from __future__ import annotations

import functools
import logging
import pathlib
from typing import Any

import yaml

from conformance import data

log = logging.getLogger(__name__)
VOLCANO_FILE = data.kit("impl", "volcano_capabilities.yaml")


def _reference_file() -> pathlib.Path | None:
    try:
        return data.reference("capabilities.yaml")
    except data.DataMissing:
        return None


def files() -> list[pathlib.Path]:
    return [path for path in (_reference_file(), VOLCANO_FILE) if path is not None]


def _names(path: pathlib.Path) -> set[str]:
    try:
        doc: Any = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        log.warning("cannot read the capability names in %s: %s", path, err)
        return set()
    caps = doc.get("capabilities") if isinstance(doc, dict) else None
    return {c for c in caps if isinstance(c, str)} if isinstance(caps, list) else set()


@functools.lru_cache(maxsize=1)
def known() -> frozenset[str]:
    """Every capability name the kit ships a claim for (`plugin:gang`, `jobplugin:ray`, ...)."""
    names: set[str] = set()
    for path in files():
        names |= _names(path)
    return frozenset(names)


def known_of(prefix: str) -> list[str]:
    """The known names with `prefix` (`plugin`), without it (`gang`)."""
    return sorted(name.partition(":")[2] for name in known() if name.startswith(f"{prefix}:"))
