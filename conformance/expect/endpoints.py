"""The `endpoints` predicate: a Service's endpoints as its EndpointSlices list them.

The endpoints of a Service are what the cluster's EndpointSlice controller derives from two other
objects: the Service's selector against the pods' labels, and each named targetPort against the
pods' container ports. A Service whose selector misses its pods, or a plugin that names a port its
containers do not open, leaves a Service with no endpoints, or endpoints without the port, while
the Service and the pods each look right on their own (docs/joints.md). This judges the result.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from conformance.cluster import resources
from conformance.expect import select
from conformance.expect.counts import count_ok, count_text
from conformance.observe import recorder

ENDPOINT_SLICE = resources.lookup("EndpointSlice")
# The label the EndpointSlice controller puts on every slice of a Service.
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


@dataclasses.dataclass(frozen=True)
class Endpoint:
    # The pod it stands for (targetRef), or its first address when it names none.
    name: str
    ready: bool
    # Each named port of the slice it is listed in: name -> number.
    ports: Mapping[str, int]


def of_service(view: recorder.View, service: str) -> list[Endpoint]:
    """Every endpoint of every slice of the Service, in slice then listing order."""
    found = []
    for sl in view.of(ENDPOINT_SLICE).values():
        if ((sl.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) != service:
            continue
        ports = {str(p.get("name") or ""): int(p["port"]) for p in sl.get("ports") or [] if p.get("port") is not None}
        for ep in sl.get("endpoints") or []:
            ref = ep.get("targetRef") or {}
            name = ref.get("name") or next(iter(ep.get("addresses") or []), "?")
            # A missing `ready` means ready (the EndpointSlice API: "nil should be interpreted as true").
            ready = (ep.get("conditions") or {}).get("ready") is not False
            found.append(Endpoint(str(name), ready, ports))
    return found


def judge(view: recorder.View, spec: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the Service's endpoints are what `spec` says, and what was seen."""
    every = of_service(view, spec["service"])
    kept = [ep for ep in every if "ready" not in spec or ep.ready == spec["ready"]]
    seen = ", ".join(f"{ep.name} ({'ready' if ep.ready else 'not ready'}; {_ports_text(ep.ports)})" for ep in every[:10]) or "none"
    observed = f"Service {spec['service']}: {len(kept)} endpoints{' ' + ('ready' if spec.get('ready') else 'not ready') if 'ready' in spec else ''} of {len(every)}: {seen}"
    problems = []
    if "count" in spec and not count_ok(spec["count"], len(kept)):
        problems.append(f"{count_text(spec['count'])} wanted")
    if "count" not in spec and "pods" not in spec and not kept:
        problems.append("at least one wanted")
    if "pods" in spec:
        wanted = {str(p["metadata"]["name"]) for p in select.pods(view, spec["pods"])}
        have = {ep.name for ep in kept}
        if not wanted:
            problems.append("the pods selection selects no pod")
        elif have != wanted:
            missing, extra = sorted(wanted - have), sorted(have - wanted)
            problems.append("; ".join(filter(None, [f"missing {missing}" if missing else "", f"not selected {extra}" if extra else ""])))
    for name, number in (spec.get("ports") or {}).items():
        wrong = [ep.name for ep in kept if ep.ports.get(name) != number]
        if wrong or not kept:
            problems.append(f"port {name} is not {number} on {wrong[:5] or 'any endpoint'}")
    return not problems, observed + (f" ({'; '.join(problems)})" if problems else "")


def expected_text(spec: Mapping[str, Any]) -> str:
    parts = [f"Service {spec['service']} has"]
    parts.append(count_text(spec["count"]) if "count" in spec else "its" if "pods" in spec else "at least one")
    parts.append(("ready " if spec.get("ready") is True else "not ready " if spec.get("ready") is False else "") + "endpoints")
    if "pods" in spec:
        parts.append(f"that are exactly the pods matching {spec['pods']}")
    if spec.get("ports"):
        parts.append(f"with ports {_ports_text(spec['ports'])}")
    return " ".join(parts)


def _ports_text(ports: Mapping[str, int]) -> str:
    return ", ".join(f"{name or '(unnamed)'}={number}" for name, number in sorted(ports.items())) or "no ports"
