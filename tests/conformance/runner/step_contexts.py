"""A StepContext on a test's own API server with the reference's CRDs installed and a recorder
watching the given kinds: what the runner tests that take steps against a real API server share."""

from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

from conformance.cluster import resources
from conformance.impl import crds, reference
from conformance.observe import recorder
from conformance.runner import steps
from tests.clusters import OwnCluster


@contextlib.contextmanager
def reference_crds_context(cluster: OwnCluster, kinds: Sequence[resources.Kind], time_scale: float) -> Iterator[steps.StepContext]:
    crds.install(cluster.api, sorted((reference.package_dir() / "crds").glob("*.yaml")), "the reference")
    client = resources.Client(cluster.api)
    rec = recorder.Recorder(client, "default", list(kinds))
    rec.start()
    try:
        yield steps.StepContext(client, "default", rec, time_scale)
    finally:
        rec.stop()
