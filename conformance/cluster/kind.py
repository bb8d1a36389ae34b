"""The kind backend (placeholder until written)."""

from __future__ import annotations


class KindBackend:
    name = "kind"
