"""The scenarios a dev session knows: every file it was asked for, loaded once and again only when
it changed on disk, and the selection `vck run` makes of them (paths, `--suite`, `-k`), made here
without a pytest collection (which costs seconds): `-k` is judged by pytest's own expression
and keyword matcher over the names pytest would give the item (its folders under the root, its
file, its id), so a `-k` selects in a dev run what it selects in any run (a test compares them)."""

from __future__ import annotations

import dataclasses
import os
import pathlib
from typing import Sequence

# pytest's own, so that -k means in a dev run what it means in any run.
from _pytest.mark import KeywordMatcher
from _pytest.mark.expression import Expression
from pytest import UsageError

from conformance.scenario import loader, models


@dataclasses.dataclass(frozen=True)
class Selection:
    scenarios: tuple[models.Scenario, ...]
    # The loader's errors (file:line, each), for the files under the paths: nothing runs.
    errors: tuple[str, ...] = ()
    # The loader's warnings, shown and otherwise ignored.
    warnings: tuple[str, ...] = ()


class SelectionError(ValueError):
    pass


class Catalog:
    def __init__(self) -> None:
        # A file's (mtime_ns, size) when read, and what reading it gave.
        self._files: dict[pathlib.Path, tuple[tuple[int, int], models.Scenario | None, list[loader.Problem]]] = {}

    def load(self, path: pathlib.Path) -> tuple[models.Scenario | None, list[loader.Problem]]:
        """The file's scenario and its problems, read again only when it changed (OSError: it is
        gone, an editor's save between the listing and the read)."""
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        known = self._files.get(path)
        if known is not None and known[0] == stamp:
            return known[1], known[2]
        try:
            scenario, problems = loader.read_file(path)
            entry: tuple[tuple[int, int], models.Scenario | None, list[loader.Problem]] = (stamp, scenario, list(problems))
        except loader.ScenarioError as err:
            entry = (stamp, None, list(err.problems))
        self._files[path] = entry
        return entry[1], entry[2]

    def select(self, paths: Sequence[pathlib.Path], suites: Sequence[str] = (), keyword: str | None = None) -> Selection:
        """The scenarios under `paths`, in `suites` (all when empty), matching `-k` (SelectionError:
        a path that does not exist, or a `-k` that does not parse)."""
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise SelectionError(f"no such file or folder: {', '.join(missing)}")
        expression = compile_keyword(keyword)
        root = rootdir(paths)
        found: list[models.Scenario] = []
        errors: list[str] = []
        warnings: list[str] = []
        for path in loader.scenario_files(list(paths)):
            try:
                scenario, problems = self.load(path.resolve())
            except OSError:
                continue  # removed while we looked: it is no longer under the paths
            errors += [str(p) for p in problems if p.is_error]
            warnings += [str(p) for p in problems if not p.is_error]
            if scenario is not None:
                found.append(scenario)
        seen: dict[str, models.Scenario] = {}
        for sc in found:
            if sc.id in seen:
                errors.append(f"{sc.path}: id {sc.id!r} is used by {seen[sc.id].path} too; ids must be unique")
            seen.setdefault(sc.id, sc)
        try:
            chosen = [sc for sc in found if (not suites or sc.suite in suites) and (expression is None or expression.evaluate(matcher(sc, root)))]
        except UsageError as err:  # `-k 'name(x=1)'`: parses, but keywords take no arguments
            raise SelectionError(f"-k {keyword!r}: {err}") from None
        return Selection(tuple(chosen), tuple(errors), tuple(warnings))


def compile_keyword(keyword: str | None) -> Expression | None:
    if not keyword:
        return None
    try:
        return Expression.compile(keyword)
    except (SyntaxError, UsageError) as err:
        where = f"at column {err.offset}: {err.msg}" if isinstance(err, SyntaxError) else str(err)
        raise SelectionError(f"-k {keyword!r} is not a valid expression: {where}") from None


def rootdir(paths: Sequence[pathlib.Path]) -> pathlib.Path:
    """The folder the paths share, as `vck run` gives pytest (api.run._rootdir)."""
    folders = [str(p.resolve() if p.is_dir() else p.resolve().parent) for p in paths]
    return pathlib.Path(os.path.commonpath(folders)) if folders else pathlib.Path.cwd()


def matcher(sc: models.Scenario, root: pathlib.Path) -> KeywordMatcher:
    """The names pytest matches `-k` against for the scenario's item: its folders below the root,
    its file, and its own name (the id)."""
    path = sc.path.resolve()
    try:
        folders = path.parent.relative_to(root).parts
    except ValueError:
        folders = (path.parent.name,)
    return KeywordMatcher({*folders, path.name, sc.id})
