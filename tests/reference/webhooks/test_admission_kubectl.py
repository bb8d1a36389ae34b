"""`kubectl apply` of each invalid Job of the admission suite fails with Volcano's reason, printed
by kubectl, and nothing is created: the reference webhook is registered with the API server over
TLS, as vc-webhook-manager is."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
from typing import Iterator

import kubernetes
import pytest
import yaml

from conformance.cluster import base
from conformance.impl import reference
from conformance.scenario import loader
from conformance.toolchain import cache, versions

pytestmark = pytest.mark.cluster
REPO = pathlib.Path(__file__).resolve().parents[3]


def rejections() -> list[tuple[str, dict, str]]:
    """(scenario id, manifest, reason pattern) of every admission scenario that only applies one
    refused object (those needing queues or commands first are left to `vck run`)."""
    scenarios, problems = loader.load_tree([REPO / "scenarios" / "admission"])
    assert not problems, problems
    # The release the reference models: a scenario of other releases only is not its to refuse.
    release = reference.Reference().volcano_release()
    out = []
    for sc in scenarios:
        if sc.setup or len(sc.steps) != 1 or sc.steps[0].expect_rejection is None:
            continue
        if release is not None and sc.releases is not None and not sc.releases.contains(release):
            continue
        out.append((sc.id, sc.steps[0].spec, sc.steps[0].expect_rejection))
    return out


CASES = rejections()


@pytest.fixture(scope="module")
def webhook(vck_cluster: base.ClusterHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[base.ClusterHandle]:
    impl = reference.Reference(workdir=tmp_path_factory.mktemp("reference"))
    impl.ensure(vck_cluster, None)
    try:
        yield vck_cluster
    finally:
        impl.stop()


def kubectl() -> pathlib.Path:
    return cache.binary_path(versions.component("kubectl"))


def test_every_plain_rejection_is_covered() -> None:
    assert len(CASES) >= 25, [c[0] for c in CASES]


@pytest.mark.parametrize(("scenario_id", "manifest", "pattern"), CASES, ids=[c[0] for c in CASES])
def test_kubectl_apply_prints_the_reason(webhook: base.ClusterHandle, tmp_path: pathlib.Path, scenario_id: str, manifest: dict, pattern: str) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({**manifest, "metadata": {**manifest["metadata"], "namespace": "default"}}))
    env = {**os.environ, "KUBECONFIG": str(webhook.kubeconfig)}
    context = ["--context", webhook.context] if webhook.context else []
    proc = subprocess.run([str(kubectl()), *context, "apply", "-f", str(path)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0, f"kubectl apply accepted the invalid job of {scenario_id}: {proc.stdout}"
    assert re.search(pattern, proc.stderr), f"kubectl's error does not carry the reason {pattern!r}: {proc.stderr}"
    name = manifest["metadata"]["name"]
    custom = kubernetes.client.CustomObjectsApi(kubernetes.config.new_client_from_config(str(webhook.kubeconfig), context=webhook.context))
    with pytest.raises(kubernetes.client.ApiException) as err:
        custom.get_namespaced_custom_object("batch.volcano.sh", "v1alpha1", "default", "jobs", name)
    assert err.value.status == 404, f"job {name} exists after being refused"
