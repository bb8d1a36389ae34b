"""The session's nodes as arrays: one row per node (sorted by name), one column per resource, so
predicates and scores are evaluated over every node at once with numpy instead of a Python loop.

The NodeInfo objects stay the model the actions and plugins reason with; each NodeInfo writes its
changes (a task placed, evicted, pipelined) into its row as well, so the arrays are always the
same facts. Upstream has no counterpart: Volcano evaluates nodes in parallel goroutines
(pkg/scheduler/util/predicate_helper.go); this is the kit's way to the same speed in Python.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from reference_scheduler.api import resource

EPSILON = resource.EPSILON


class NodeMatrix:
    def __init__(self, names: Sequence[str], resource_names: Iterable[str]) -> None:
        self.names = list(names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.resources = sorted(set(resource_names))
        self.column = {name: j for j, name in enumerate(self.resources)}
        shape = (len(self.names), len(self.resources))
        self.allocatable = np.zeros(shape)
        self.used = np.zeros(shape)
        # Held by pods being deleted, and promised to pipelined tasks: see NodeInfo.future_idle.
        self.releasing = np.zeros(shape)
        self.pipelined = np.zeros(shape)
        self.pod_count = np.zeros(len(self.names), dtype=np.int64)
        self.max_pods = np.zeros(len(self.names), dtype=np.int64)
        self.unschedulable = np.zeros(len(self.names), dtype=bool)
        self.name_array = np.array(self.names, dtype=object)

    def __len__(self) -> int:
        return len(self.names)

    def row_of(self, values: resource.Resource) -> np.ndarray:
        """A resource as a row vector over the matrix's columns (names it lacks are dropped)."""
        row = np.zeros(len(self.resources))
        for name, value in values.values.items():
            j = self.column.get(name)
            if j is not None:
                row[j] = value
        return row

    def add(self, i: int, kind: str, values: resource.Resource, sign: int) -> None:
        target = getattr(self, kind)
        for name, value in values.values.items():
            j = self.column.get(name)
            if j is not None:
                target[i, j] += sign * value

    def idle(self) -> np.ndarray:
        return self.allocatable - self.used

    def future_idle(self) -> np.ndarray:
        """Free once releasing pods are gone and pipelined tasks have landed, for every node."""
        return self.allocatable - self.used + self.releasing - self.pipelined


class Request:
    """A task's request against a matrix: the row vector, and the names no node has at all."""

    def __init__(self, matrix: NodeMatrix, values: resource.Resource) -> None:
        self.row = matrix.row_of(values)
        self.asked = self.row > EPSILON
        self.unknown = sorted(n for n, v in values.values.items() if v > EPSILON and n not in matrix.column)

    def fits(self, free: np.ndarray) -> np.ndarray:
        """Per node: does the request fit in `free` (nodes × resources)?"""
        if self.unknown:
            return np.zeros(free.shape[0], dtype=bool)
        fit: np.ndarray = np.all((self.row <= free + EPSILON) | ~self.asked, axis=1)
        return fit

    def insufficient(self, matrix: NodeMatrix, free: np.ndarray) -> list[str]:
        """Per node, `Insufficient cpu, Insufficient memory` for what does not fit ('' where all fits)."""
        lacking = (self.row > free + EPSILON) & self.asked
        # One string per distinct combination of lacking resources, not one per node.
        texts: dict[bytes, str] = {}
        out = []
        for i in range(len(matrix)):
            key = lacking[i].tobytes()
            text = texts.get(key)
            if text is None:
                names = sorted([matrix.resources[j] for j in np.flatnonzero(lacking[i])] + self.unknown)
                text = texts[key] = ", ".join(f"Insufficient {n}" for n in names)
            out.append(text)
        return out
