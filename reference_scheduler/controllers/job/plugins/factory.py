"""The only place that maps a job plugin's name (a key of a Job's `spec.plugins`) to its class.
Each built-in plugin lives in its own module with the flags and defaults of its upstream namesake;
adding one is a module and a line here.

Upstream: pkg/controllers/job/plugins/factory.go (registers env, svc, ssh and
distributed-framework/{mpi,pytorch,tensorflow,hcclrank,ray}).
"""

from __future__ import annotations

from typing import Sequence

from reference_scheduler.controllers.job.plugins import (
    env,
    hcclrank,
    mpi,
    pytorch,
    ray,
    ssh,
    svc,
    tensorflow,
)
from reference_scheduler.controllers.job.plugins.base import Plugin

KNOWN: dict[str, type[Plugin]] = {
    env.NAME: env.Env,
    svc.NAME: svc.Svc,
    ssh.NAME: ssh.Ssh,
    mpi.NAME: mpi.Mpi,
    pytorch.NAME: pytorch.Pytorch,
    tensorflow.NAME: tensorflow.Tensorflow,
    hcclrank.NAME: hcclrank.Hcclrank,
    ray.NAME: ray.Ray,
}


def build(plugins: dict[str, Sequence[str]] | None) -> list[Plugin]:
    """The job's plugins in a stable order (Volcano iterates its map; the order does not change
    what any plugin writes, since none reads another's output except hcclrank reading RANK)."""
    order = ["env", "svc", "ssh", "mpi", "pytorch", "tensorflow", "ray", "hcclrank"]
    names = sorted((plugins or {}).keys(), key=lambda n: order.index(n) if n in order else len(order))
    return [KNOWN[n](n, list((plugins or {})[n] or [])) for n in names if n in KNOWN]
