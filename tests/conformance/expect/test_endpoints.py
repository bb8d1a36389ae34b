"""The `endpoints` predicate on in-memory EndpointSlices: a Service's endpoints are the pods its
selector meets, each named port resolved per slice; the scenarios that use it run on a real
cluster (plugins-ray-head-service, plugins-svc-headless-service, plugins-pytorch-custom-port)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.expect import endpoints, predicates
from tests.conformance.expect import states

SLICE = endpoints.ENDPOINT_SLICE
POD, pod, view, pred = states.POD, states.pod, states.view, states.pred


def endpoint_slice(name: str, service: str, pods: dict[str, bool], ports: dict[str, int] | None = None) -> dict[str, Any]:
    """A slice of `service` listing `pods` (name: ready) with `ports` (name: number)."""
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {endpoints.SERVICE_NAME_LABEL: service}},
        "ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in (ports or {}).items()] or None,
        "endpoints": [{"addresses": [f"10.0.0.{i}"], "conditions": {"ready": ready}, "targetRef": {"kind": "Pod", "name": p}} for i, (p, ready) in enumerate(pods.items())],
    }


HEAD = (POD, pod("ray-head-0", "ray", task="head", phase="Running", node="n0"))
WORKERS = [(POD, pod(f"ray-worker-{i}", "ray", task="worker", phase="Running", node="n1")) for i in range(2)]
RESOLVED = {"gcs": 6379, "dashboard": 8265}


@pytest.mark.parametrize(
    ("slices", "spec", "holds", "shown"),
    [
        # The head pod alone, its named ports resolved.
        ([endpoint_slice("s1", "head-svc", {"ray-head-0": True}, RESOLVED)], {"pods": {"task": "head"}, "ports": RESOLVED}, True, "ray-head-0 (ready; dashboard=8265, gcs=6379)"),
        # A selector that also met the workers: endpoints that are not the selected pods.
        ([endpoint_slice("s1", "head-svc", {"ray-head-0": True, "ray-worker-0": True}, RESOLVED)], {"pods": {"task": "head"}}, False, "not selected ['ray-worker-0']"),
        # A selector that met nothing: no endpoint at all.
        ([], {"pods": {"task": "head"}}, False, "missing ['ray-head-0']"),
        ([], {}, False, "at least one wanted"),
        # A named targetPort the container does not open: the pod is listed in a slice without it.
        ([endpoint_slice("s1", "head-svc", {"ray-head-0": True}, {"gcs": 6379})], {"ports": RESOLVED}, False, "port dashboard is not 8265 on ['ray-head-0']"),
        # The same name resolved to another number.
        ([endpoint_slice("s1", "head-svc", {"ray-head-0": True}, {"gcs": 6380, "dashboard": 8265})], {"ports": RESOLVED}, False, "port gcs is not 6379"),
        # Endpoints spread over two slices (the controller groups them by resolved ports), and
        # another Service's slice, which is not counted.
        ([endpoint_slice("s1", "head-svc", {"ray-worker-0": True}), endpoint_slice("s2", "head-svc", {"ray-worker-1": False}), endpoint_slice("s3", "other", {"ray-head-0": True})],
         {"count": 2, "pods": {"task": "worker"}}, True, "2 endpoints of 2"),
        ([endpoint_slice("s1", "head-svc", {"ray-worker-0": True}), endpoint_slice("s2", "head-svc", {"ray-worker-1": False})], {"ready": True, "count": 2}, False, "1 endpoints ready of 2"),
        ([endpoint_slice("s1", "head-svc", {"ray-worker-0": True}), endpoint_slice("s2", "head-svc", {"ray-worker-1": False})], {"ready": False, "pods": {"names": ["ray-worker-1"]}}, True, "ray-worker-1 (not ready"),
    ],
)
def test_endpoints_are_the_pods_and_ports_the_slices_list(slices: list[dict[str, Any]], spec: dict[str, Any], holds: bool, shown: str) -> None:
    state = view(HEAD, *WORKERS, *((SLICE, s) for s in slices))
    outcome = predicates.evaluate(pred("endpoints", service="head-svc", **spec), state)
    assert outcome.holds is holds, outcome
    assert shown in outcome.observed, outcome


def test_a_slice_without_ready_counts_its_endpoint_as_ready() -> None:
    """The EndpointSlice API: an unset `ready` is to be read as true."""
    bare = endpoint_slice("s1", "head-svc", {"ray-head-0": True})
    del bare["endpoints"][0]["conditions"]["ready"]
    assert predicates.evaluate(pred("endpoints", service="head-svc", ready=True, count=1), view(HEAD, (SLICE, bare))).holds


def test_expected_text_says_what_is_judged() -> None:
    text = predicates.expected_text(pred("endpoints", service="head-svc", pods={"task": "head"}, ports={"gcs": 6379}))
    assert text == "Service head-svc has its endpoints that are exactly the pods matching {'task': 'head'} with ports gcs=6379"
