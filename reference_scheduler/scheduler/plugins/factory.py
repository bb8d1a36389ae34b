"""The only place that maps a plugin's conf name to its builder."""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

from reference_scheduler.scheduler.framework import interface
from reference_scheduler.scheduler.plugins import binpack, conformance, gang, known, overcommit, predicates, priority, proportion

Builder = Callable[[Mapping[str, Any]], interface.Plugin]
BUILDERS: dict[str, Builder] = {
    binpack.NAME: binpack.Binpack,
    conformance.NAME: conformance.Conformance,
    gang.NAME: gang.Gang,
    priority.NAME: priority.Priority,
    predicates.NAME: predicates.Predicates,
    proportion.NAME: proportion.Proportion,
    overcommit.NAME: overcommit.Overcommit,
    **{name: functools.partial(known.NotImplemented_, name) for name in known.NAMES},
}
NAMES = tuple(BUILDERS)
