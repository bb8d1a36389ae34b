"""The scheduler's conf file is read again when it changes, as vc-scheduler's is: a new conf is
used from the next cycle, a conf that does not load leaves the running one in place, and every
load is logged with the digest the kit's adapter waits for."""

from __future__ import annotations

import logging
import os
import pathlib

import pytest

from conformance.impl import reference as reference_adapter
from reference_scheduler.scheduler import conf, conf_watch

GANG_ONLY = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n'
WITH_BACKFILL = 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: gang\n  - name: priority\n'


def write(path: pathlib.Path, text: str) -> None:
    """As the kit's adapter writes it: whole, then renamed into place."""
    partial = path.with_suffix(".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def test_a_changed_file_is_used_from_the_next_refresh(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    write(path, GANG_ONLY)
    watched = conf_watch.ConfFile(str(path))
    first = watched.current
    assert first.actions == ("enqueue", "allocate")
    assert watched.refresh() is first  # unchanged: the same conf, not read again
    write(path, WITH_BACKFILL)
    assert watched.refresh().actions == ("enqueue", "allocate", "backfill")
    assert [p.name for p in watched.current.tiers[0]] == ["gang", "priority"]


def test_a_conf_that_does_not_load_keeps_the_running_one(tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    write(path, GANG_ONLY)
    watched = conf_watch.ConfFile(str(path))
    write(path, 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gnag\n')
    with caplog.at_level(logging.ERROR):
        kept = watched.refresh()
    assert kept.actions == ("enqueue", "allocate") and [p.name for p in kept.tiers[0]] == ["gang"]
    assert any("does not load, keeping the one in use" in r.getMessage() and "gnag" in r.getMessage() for r in caplog.records)
    # A later good conf is taken again.
    write(path, WITH_BACKFILL)
    assert watched.refresh().actions == ("enqueue", "allocate", "backfill")


def test_a_vanished_file_keeps_the_running_conf(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    write(path, GANG_ONLY)
    watched = conf_watch.ConfFile(str(path))
    os.remove(path)
    assert watched.refresh().actions == ("enqueue", "allocate")


def test_the_first_conf_must_load(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    write(path, "actions: \"\"\n")
    with pytest.raises(conf.ConfError, match="actions"):
        conf_watch.ConfFile(str(path))
    with pytest.raises(conf.ConfError, match="cannot read"):
        conf_watch.ConfFile(str(tmp_path / "missing.conf"))


def test_no_path_is_volcanos_default_conf() -> None:
    watched = conf_watch.ConfFile(None)
    assert watched.current == conf.parse(conf.DEFAULT_CONF)
    assert watched.refresh() is watched.current


def test_each_load_logs_the_digest_the_adapter_waits_for(tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    write(path, GANG_ONLY)
    with caplog.at_level(logging.INFO):
        watched = conf_watch.ConfFile(str(path))
        write(path, WITH_BACKFILL)
        watched.refresh()
    messages = [r.getMessage() for r in caplog.records]
    # The adapter computes the line from the text it wrote; the scheduler from the file's bytes.
    assert any(m.startswith(reference_adapter.conf_loaded(GANG_ONLY)) for m in messages), messages
    assert any(m.startswith(reference_adapter.conf_loaded(WITH_BACKFILL)) for m in messages), messages
