"""Where an implementation keeps its logs, conf and certificates (impl_base.Workdir): in the
cluster's own state folder, 0700, or a private temporary folder for a cluster the kit keeps none
for, removed once released; nothing at all before a cluster is given."""

from __future__ import annotations

import os
import pathlib
import stat

import pytest

from conformance.cluster import base
from conformance.impl import base as impl_base


def handle(state_dir: pathlib.Path | None) -> base.ClusterHandle:
    return base.ClusterHandle(name="c", backend="embedded" if state_dir else "existing", kubeconfig=pathlib.Path("kubeconfig"), state_dir=state_dir)


@pytest.fixture(autouse=True)
def private_temp(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    temp = tmp_path / "system-temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    monkeypatch.delenv("VCK_REFERENCE_WORKDIR", raising=False)
    monkeypatch.delenv(impl_base.WORKER_ENV, raising=False)
    return temp


def test_in_the_clusters_state_folder_and_private(tmp_path: pathlib.Path, private_temp: pathlib.Path) -> None:
    workdir = impl_base.Workdir("VCK_REFERENCE_WORKDIR", "reference")
    assert not list(tmp_path.glob("state*")) and not list(private_temp.iterdir())
    folder = workdir.for_cluster(handle(tmp_path / "state"))
    assert folder == tmp_path / "state" / "reference"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    workdir.release()  # the cluster's folder goes with the cluster, not here
    assert folder.exists() and not list(private_temp.iterdir())


def test_an_existing_cluster_gets_one_temporary_folder_until_released(private_temp: pathlib.Path) -> None:
    workdir = impl_base.Workdir("VCK_REFERENCE_WORKDIR", "reference")
    folder = workdir.for_cluster(handle(None))
    assert folder.parent == private_temp and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert workdir.for_cluster(handle(None)) == folder  # again for the same adapter: the same one
    workdir.release()
    assert not folder.exists() and not list(private_temp.iterdir())


def test_the_environment_names_a_folder_per_worker(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VCK_REFERENCE_WORKDIR", str(tmp_path / "logs"))
    monkeypatch.setenv(impl_base.WORKER_ENV, "gw3")
    folder = impl_base.Workdir("VCK_REFERENCE_WORKDIR", "reference").for_cluster(handle(None))
    assert folder == tmp_path / "logs" / "gw3" and os.path.isdir(folder)
