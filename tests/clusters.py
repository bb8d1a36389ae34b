"""The kit's own tests' private cluster (the `own_cluster` fixture of tests/conftest.py yields one):
imported by the tests that type it, never from the conftest."""

from __future__ import annotations

import dataclasses
import pathlib

import kubernetes

from conformance.cluster import base


@dataclasses.dataclass(frozen=True)
class OwnCluster:
    """A one-node embedded cluster that only its module's tests use: no implementation runs in it
    (the worker's session cluster may run the reference, started by tests that run scenarios)."""

    handle: base.ClusterHandle
    state_dir: pathlib.Path
    api: kubernetes.client.ApiClient
