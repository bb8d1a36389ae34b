"""`vck validate PATH...`: every problem in the scenario files, one per line."""

from __future__ import annotations

import pathlib
from typing import Sequence

from conformance.scenario import loader


def validate_paths(paths: Sequence[pathlib.Path]) -> list[loader.Problem]:
    missing = [loader.Problem(str(p), "", 0, "no such file or folder") for p in paths if not p.exists()]
    _, problems = loader.load_tree([p for p in paths if p.exists()])
    return missing + problems


def format_problems(problems: Sequence[loader.Problem]) -> str:
    files = len({p.file for p in problems})
    lines = [str(p) for p in problems]
    lines.append(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {files} file{'s' if files != 1 else ''}")
    return "\n".join(lines)
