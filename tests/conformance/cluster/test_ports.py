"""Ports for the kit's processes: below the ephemeral range, free on every address, and never
handed to two kit processes while one of them has yet to bind."""

from __future__ import annotations

import pathlib
import random
import socket

import pytest

from conformance.cluster import ports


def test_ports_are_distinct_free_and_below_the_ephemeral_range(tmp_path: pathlib.Path) -> None:
    chosen = ports.reserve(5, registry=tmp_path / "ports.json")
    assert len(set(chosen)) == 5
    assert all(ports.LOWEST <= p < ports._ephemeral_low() for p in chosen), chosen
    assert all(ports._bindable(p) for p in chosen)


def test_a_reserved_port_is_not_handed_out_again(tmp_path: pathlib.Path) -> None:
    registry = tmp_path / "ports.json"
    first = ports.reserve(1, registry=registry, rng=random.Random(7))
    # The same random sequence would pick the same port first: the registry says it is taken.
    second = ports.reserve(1, registry=registry, rng=random.Random(7))
    assert first != second


def test_reservations_expire(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = tmp_path / "ports.json"
    monkeypatch.setattr(ports, "RESERVATION_S", -1.0)
    first = ports.reserve(1, registry=registry, rng=random.Random(7))
    assert ports.reserve(1, registry=registry, rng=random.Random(7)) == first


def test_a_port_in_use_is_skipped(tmp_path: pathlib.Path) -> None:
    (taken,) = ports.reserve(1, registry=tmp_path / "a.json", rng=random.Random(11))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("0.0.0.0", taken))
        sock.listen()
        # A fresh registry and the same random sequence: only the bind check can refuse it.
        assert taken not in ports.reserve(1, registry=tmp_path / "b.json", rng=random.Random(11))
