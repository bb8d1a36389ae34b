"""`vck validate PATH...`: every problem in the scenario files, one per line; warnings beside them."""

from __future__ import annotations

import pathlib
from typing import Sequence

from conformance.scenario import loader


def validate_paths(paths: Sequence[pathlib.Path]) -> list[loader.Problem]:
    """Every problem and warning; the files are valid when none is an error."""
    missing = [loader.Problem(str(p), "", 0, "no such file or folder") for p in paths if not p.exists()]
    _, problems = loader.load_tree([p for p in paths if p.exists()])
    return missing + problems


def errors(problems: Sequence[loader.Problem]) -> list[loader.Problem]:
    return [p for p in problems if p.is_error]


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def format_problems(problems: Sequence[loader.Problem]) -> str:
    """One line per problem, then `3 problems in 2 files` (`, 1 warning`); or `1 warning in 1 file`."""
    failed = errors(problems)
    warned = [p for p in problems if not p.is_error]
    lines = [str(p) for p in problems]
    if failed:
        summary = f"{_count(len(failed), 'problem')} in {_count(len({p.file for p in failed}), 'file')}"
        if warned:
            summary += f", {_count(len(warned), 'warning')}"
    else:
        summary = f"{_count(len(warned), 'warning')} in {_count(len({p.file for p in warned}), 'file')}"
    lines.append(summary)
    return "\n".join(lines)
