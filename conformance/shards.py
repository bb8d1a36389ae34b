"""`vck run --shard K/N`: a stable 1/N of the selection, so CI can spread one certification over N
jobs and merge their reports (`vck report merge`).

The split is a function of the selection and the durations alone: every shard of one CI run
computes the same partition. With an earlier run's durations (`--durations`, or the last whole
run's) the scenarios are dealt longest first to the shard with the least time so far; without,
by count (scenario ids in order, dealt round robin). Ties fall to the lower shard, and an unknown
scenario counts as the median known duration.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import statistics
from typing import Callable, Mapping, Sequence, TypeVar

T = TypeVar("T")
_SHARD = re.compile(r"^(\d+)/(\d+)$")


@dataclasses.dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str) -> Shard:
    """`K/N` with 1 <= K <= N; ValueError says what was expected."""
    found = _SHARD.match(text.strip())
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise ValueError(f"--shard {text!r}: expected K/N with 1 <= K <= N, such as 2/3")
    return Shard(int(found.group(1)), int(found.group(2)))


def assign(names: Sequence[str], count: int, durations: Mapping[str, float]) -> dict[str, int]:
    """Each name's shard (0-based) when the names are split `count` ways."""
    order = sorted(set(names))
    known = [durations[name] for name in order if name in durations]
    if not known:
        return {name: position % count for position, name in enumerate(order)}
    typical = statistics.median(known)
    weight = {name: durations.get(name, typical) for name in order}
    loads = [0.0] * count
    owner: dict[str, int] = {}
    for name in sorted(order, key=lambda name: (-weight[name], name)):
        target = min(range(count), key=lambda s: (loads[s], s))
        owner[name] = target
        loads[target] += weight[name]
    return owner


def pick(items: Sequence[T], name: Callable[[T], str], shard: Shard, durations: Mapping[str, float]) -> list[T]:
    """The items of one shard, in their order; `name(item)` is its scenario id."""
    owner = assign([name(item) for item in items], shard.count, durations)
    return [item for item in items if owner[name(item)] == shard.index - 1]


def plan(names: Sequence[str], count: int, durations: Mapping[str, float], keyword: str | None) -> str:
    """A digest of the whole split (every name's shard, and the -k applied within): shards of one
    run have the same plan, and `vck report merge` refuses shards whose plans differ (cut with
    different durations or selections, their union would miss or double scenarios)."""
    owner = assign(names, count, durations)
    text = json.dumps({"owner": owner, "keyword": keyword or ""}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
