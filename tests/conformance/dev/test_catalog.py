"""The dev session's selection (paths, suites, -k) is the one any `vck run` makes: -k judged by
pytest's own expression over the names pytest gives a scenario's item, compared here with a
pytest collection of the same selection; a file reloaded only when it changed."""

from __future__ import annotations

import os
import pathlib

import pytest

from conformance import api
from conformance.dev import catalog

SCENARIOS = api.DEFAULT_SCENARIOS


@pytest.fixture(scope="module")
def known() -> catalog.Catalog:
    return catalog.Catalog()


@pytest.fixture(scope="module")
def shipped() -> api.RunConfig:
    """One configuration for every -k: the scenarios are loaded once."""
    return api.RunConfig()


@pytest.mark.parametrize(
    "keyword",
    # An id, a boolean expression, a file name, and case: what pytest's matcher tells apart.
    ["gang-full-occupancy", "queue and not reclaim", "full-occupancy.yaml", "GANG"],
)
def test_k_selects_what_a_pytest_collection_selects(known: catalog.Catalog, shipped: api.RunConfig, keyword: str) -> None:
    config = shipped
    config.keyword = keyword
    assert not api.keyword_problems(config)
    chosen = known.select([SCENARIOS], keyword=keyword)
    assert not chosen.errors
    assert sorted(sc.id for sc in chosen.scenarios) == sorted(config.keyword_ids or ())


def test_suites_and_paths_narrow_the_selection(known: catalog.Catalog) -> None:
    gang = known.select([SCENARIOS], suites=["gang"])
    assert gang.scenarios and {sc.suite for sc in gang.scenarios} == {"gang"}
    one = known.select([SCENARIOS / "gang" / "full-occupancy.yaml"])
    assert [sc.id for sc in one.scenarios] == ["gang-full-occupancy"]


def test_a_bad_k_or_path_is_refused(known: catalog.Catalog, tmp_path: pathlib.Path) -> None:
    with pytest.raises(catalog.SelectionError, match="is not a valid expression"):
        known.select([SCENARIOS], keyword="gang and (")
    with pytest.raises(catalog.SelectionError, match="-k 'gang\\(x=1\\)'"):
        known.select([SCENARIOS], keyword="gang(x=1)")
    with pytest.raises(catalog.SelectionError, match="no such file or folder"):
        known.select([tmp_path / "nowhere"])


def test_a_changed_file_is_read_again_and_a_broken_one_gives_its_line(tmp_path: pathlib.Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    path = mine / "copy.yaml"
    original = (SCENARIOS / "gang" / "full-occupancy.yaml").read_text()
    path.write_text(original.replace("id: gang-full-occupancy", "id: mine-copy").replace("suite: gang", "suite: mine"))
    cat = catalog.Catalog()
    first = cat.select([mine])
    assert [sc.title for sc in first.scenarios] == ["A gang that exactly fills the cluster is scheduled"]
    # The same file, unchanged: the very same scenario object, not read again.
    assert cat.select([mine]).scenarios[0] is first.scenarios[0]
    path.write_text(path.read_text().replace("title: A gang that exactly", "title: Edited, a gang that exactly"))
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 1_000_000))
    assert cat.select([mine]).scenarios[0].title.startswith("Edited,")
    path.write_text(path.read_text() + "steps: [\n")
    broken = cat.select([mine])
    assert not broken.scenarios and broken.errors and broken.errors[0].startswith(f"{path.resolve()}:"), broken.errors
