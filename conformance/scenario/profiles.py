"""A scenario's device profile (`cluster.profile`): a built-in profile's name, or a profile
written inline, checked by fake_devices and reported at the scenario file's own lines.

fake_devices owns the profile format; the kit only says where in a scenario a profile sits, and
that its nodes must not share a name with the scenario's plain `cluster.nodes`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from conformance.cluster import nodes
from fake_devices import profile, profile_check

AT = ("cluster", "profile")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def resolve(spec: str | Mapping[str, Any]) -> profile.Profile:
    """The profile a scenario names or writes; ProfileError when it cannot be used."""
    if isinstance(spec, str):
        return profile.builtin(spec)
    return profile.from_document(spec, "cluster.profile")


def problems(doc: Mapping[str, Any], plain: Sequence[nodes.NodeGroup]) -> list[tuple[tuple[Any, ...], str]]:
    """Every problem with the scenario's profile, as (path in the scenario, message); none when
    the scenario has no profile. `plain` are the scenario's other node groups."""
    cluster = doc.get("cluster")
    if not isinstance(cluster, Mapping) or "profile" not in cluster:
        return []
    spec = cluster["profile"]
    if isinstance(spec, str):
        if not _NAME.match(spec):
            return []  # the scenario schema reports a name that cannot be one
        if spec not in profile.builtin_names():
            return [(AT, f"no built-in profile named {spec!r}; expected one of: {', '.join(profile.builtin_names())}, or a profile written inline")]
    elif isinstance(spec, Mapping):
        found = profile_check.problems(dict(spec))
        if found:
            return [((*AT, *p.path), p.message) for p in found]
    else:
        return []  # the scenario schema reports the wrong type
    try:
        prof = resolve(spec)
    except profile.ProfileError as err:  # a built-in profile that does not load: a kit defect, said plainly
        return [(AT, f"the profile does not load: {err}")]
    taken = set(nodes.node_names(plain)) if cluster.get("nodes") else set()
    clashes = sorted(taken & {n.name for n in prof.nodes})
    if clashes:
        return [(AT, f"profile {prof.name!r} names nodes {', '.join(clashes)}, which cluster.nodes names too; give one of them another prefix")]
    return []
