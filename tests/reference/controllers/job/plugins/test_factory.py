"""The job plugins' factory (reference_scheduler/controllers/job/plugins/factory.py): every built-in
plugin registered under its module's name, a job's plugins built in a stable order whatever the
Job's map order, and no plugin editing the job's template the next pod is made from."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reference_scheduler.controllers.job.plugins import (
    env,
    factory,
    hcclrank,
    mpi,
    pytorch,
    ray,
    ssh,
    svc,
    tensorflow,
)
from tests.reference.controllers.job import harness
from tests.reference.controllers.job.harness import task
from tests.reference.controllers.job.plugins.plugin_harness import created_pod


def test_plugins_leave_the_job_alone() -> None:
    """A plugin edits the pod it is given, never the job's template the next pod is made from."""
    job = harness.job(task("master"), task("worker", replicas=2))
    before = json.dumps(job, sort_keys=True)
    plugins = factory.build({name: [] for name in factory.KNOWN if name != "ray"})
    for name, index in (("master", 0), ("worker", 0), ("worker", 1)):
        created_pod(plugins, job, name, index)
    assert json.dumps(job, sort_keys=True) == before


# --- the registry ------------------------------------------------------------------------------
def test_every_builtin_plugin_is_registered_under_its_module_name() -> None:
    modules = (env, svc, ssh, mpi, pytorch, tensorflow, hcclrank, ray)
    assert {m.NAME: m for m in modules}.keys() == factory.KNOWN.keys()
    for module in modules:
        cls = factory.KNOWN[module.NAME]
        assert cls.__module__ == module.__name__


@pytest.mark.parametrize(
    ("plugins", "names", "args"),
    [
        (None, [], []),
        ({}, [], []),
        # A stable order whatever the Job's map order: hcclrank last, so it reads pytorch's RANK.
        ({"hcclrank": [], "pytorch": [], "svc": [], "env": []}, ["env", "svc", "pytorch", "hcclrank"], [[], [], [], []]),
        ({"ray": [], "tensorflow": [], "mpi": [], "ssh": []}, ["ssh", "mpi", "tensorflow", "ray"], [[], [], [], []]),
        ({"hcclrank": [], "ray": []}, ["ray", "hcclrank"], [[], []]),
        # Unknown names are dropped (the webhook refuses them); a null argument list is empty.
        ({"nope": ["x"], "mpi": None, "env": ["--a"]}, ["env", "mpi"], [["--a"], []]),
    ],
)
def test_build(plugins: dict[str, Any] | None, names: list[str], args: list[list[str]]) -> None:
    built = factory.build(plugins)
    assert [p.name for p in built] == names
    assert [list(p.args) for p in built] == args
    assert [type(p) for p in built] == [factory.KNOWN[n] for n in names]
