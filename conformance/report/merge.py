"""`vck report merge DIR...`: one run made of the shards of one (`vck run --shard K/N`), so a CI
that spread a certification over N jobs gets one report.json, junit.xml and index.html.

The merged run is certified only when every shard 1..N ran to the end and the union certifies: a
missing shard or an interrupted one is recorded as the run's interruption, which no certification
survives. Shards of different implementations, a shard given twice, or a scenario judged by two
shards are refused (MergeError): they are not one run.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from conformance import results, shards


class MergeError(ValueError):
    """The reports are not the shards of one run; the message says why."""


def _shard(run: results.RunResult) -> tuple[int, int]:
    text = run.metadata.shard
    if not text:
        raise MergeError(f"run {run.metadata.run_id} is not a shard (it ran the whole selection): nothing to merge it with")
    found = shards.parse(text)
    return found.index, found.count


def merge(runs: Sequence[results.RunResult], run_id: str, command: str = "vck report merge") -> results.RunResult:
    if not runs:
        raise MergeError("no report to merge")
    first = runs[0].metadata
    parts = [_shard(run) for run in runs]
    counts = {count for _, count in parts}
    if len(counts) > 1:
        raise MergeError(f"the reports split their runs differently ({', '.join(sorted(f'1/{c}' for c in counts))}...): they are not the shards of one run")
    for run in runs:
        meta = run.metadata
        if (meta.implementation, meta.backend) != (first.implementation, first.backend):
            raise MergeError(f"run {meta.run_id} judged {meta.implementation} on {meta.backend}, run {first.run_id} {first.implementation} on {first.backend}")
    plans = {run.metadata.shard_plan for run in runs}
    if len(plans) > 1:
        raise MergeError("the shards were cut from different splits (another selection, -k or --durations): their union is not one run's selection")
    seen: dict[int, str] = {}
    for (index, _), run in zip(parts, runs, strict=True):
        if index in seen:
            raise MergeError(f"shard {index} is given twice (runs {seen[index]} and {run.metadata.run_id})")
        seen[index] = run.metadata.run_id
    owner: dict[str, str] = {}
    for run in runs:
        for sc in run.scenarios:
            if sc.id in owner:
                raise MergeError(f"scenario {sc.id} was judged by two shards (runs {owner[sc.id]} and {run.metadata.run_id})")
            owner[sc.id] = run.metadata.run_id
    count = counts.pop()
    why = [f"shard {index}/{count} did not run" for index in range(1, count + 1) if index not in seen]
    why += [f"shard {run.metadata.shard} was interrupted ({run.metadata.interrupted})" for run in runs if run.metadata.interrupted]
    metas = [run.metadata for run in runs]
    meta = dataclasses.replace(
        first,
        run_id=run_id,
        started_at=min(m.started_at for m in metas),
        # The shards run side by side: the run took as long as its longest shard.
        wall_time_s=max(m.wall_time_s for m in metas),
        command=command,
        workers=sum(m.workers for m in metas),
        selected=sum(m.selected for m in metas),
        interrupted="; ".join(why),
        stress=max(m.stress for m in metas),
        setup_s={f"shard {m.shard} {name}": seconds for m in metas for name, seconds in m.setup_s.items()},
        shard="",
        shard_plan="",
    )
    scenarios = sorted((sc for run in runs for sc in run.scenarios), key=lambda sc: (sc.suite, sc.id))
    return results.RunResult(meta, tuple(scenarios))
