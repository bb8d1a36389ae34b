"""A priority queue ordered by an extension point's comparison (negative: left first), as the
actions take jobs and queues one at a time and push back the ones with work left.

Upstream: pkg/scheduler/util/priority_queue.go.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable, Generic, Iterable, TypeVar

T = TypeVar("T")


class _Entry(Generic[T]):
    __slots__ = ("item", "seq", "compare")

    def __init__(self, item: T, seq: int, compare: Callable[[T, T], int]) -> None:
        self.item = item
        self.seq = seq
        self.compare = compare

    def __lt__(self, other: _Entry[T]) -> bool:
        result = self.compare(self.item, other.item)
        # Equal by every plugin: first pushed first, so runs repeat.
        return result < 0 if result else self.seq < other.seq


class PriorityQueue(Generic[T]):
    def __init__(self, compare: Callable[[T, T], int], items: Iterable[T] = ()) -> None:
        self._compare = compare
        self._seq = itertools.count()
        self._heap: list[_Entry[T]] = [_Entry(item, next(self._seq), compare) for item in items]
        heapq.heapify(self._heap)

    def push(self, item: T) -> None:
        heapq.heappush(self._heap, _Entry(item, next(self._seq), self._compare))

    def pop(self) -> T:
        return heapq.heappop(self._heap).item

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)
