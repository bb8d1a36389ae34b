"""The `volcano` adapter claims what its release registers, read from the release's source
(conformance/impl/volcano_release.py), on a stand-in source tree (tests/data/volcano_release)."""

from __future__ import annotations

import pathlib
import shutil

import pytest

from conformance import data
from conformance.impl import registry, volcano, volcano_release
from conformance.scenario import loader
from conformance.toolchain import errors, volcano_resolve

TREE = pathlib.Path(__file__).parents[2] / "data" / "volcano_release"


def test_the_factories_name_actions_plugins_and_job_plugins() -> None:
    found = volcano_release.read(TREE)
    assert found is not None
    # shuffle's Name() returns a constant; allocate's test file's Name() is not read; a
    # registration commented out is none.
    assert found.actions == {"allocate", "shuffle", "gangpreempt"}
    # One plugin imported under its package clause (the folder's name differs), one under an alias.
    assert found.plugins == {"gang", "network-topology-aware", "task-topology"}
    assert found.job_plugins == {"ssh", "env", "svc"}


def test_the_release_replaces_the_files_actions_plugins_and_job_plugins_and_keeps_the_parts_it_has() -> None:
    file_claims = volcano.claims()
    claimed = volcano_release.claims(file_claims, TREE)
    assert {"jobplugin:ray", "plugin:proportion", "action:preempt"} <= file_claims - claimed
    assert {"action:allocate", "plugin:task-topology", "jobplugin:svc"} <= claimed
    # A release claims what it registers beyond the file's list.
    assert "action:gangpreempt" in claimed and "action:gangpreempt" not in file_claims
    # Controllers and webhooks: only those whose folder the release has.
    assert {"controller:queue", "admission:job"} <= claimed
    assert not {"controller:cronjob", "admission:cronjob", "controller:podgroup", "admission:queue"} & claimed
    # What neither the factories nor the folders say stays as the file says.
    judged = (*volcano_release.KINDS, *volcano_release.FOLDERS)
    assert {c for c in claimed if c.split(":")[0] not in judged} == {c for c in file_claims if c.split(":")[0] not in judged}


def test_a_source_the_reader_cannot_place_keeps_the_files_claims_of_its_kinds(tmp_path: pathlib.Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    assert volcano_release.claims(volcano.claims(), None) == volcano.claims()
    (tree / volcano_release.PLUGINS_FACTORY).write_text((tree / volcano_release.PLUGINS_FACTORY).read_text().replace("gang.PluginName", "elsewhere.PluginName"))
    assert volcano_release.read(tree) is None
    # An unreadable factory leaves its kinds as the file says; the folders are still judged.
    claimed = volcano_release.claims(volcano.claims(), tree)
    assert "jobplugin:ray" in claimed and "controller:cronjob" not in claimed
    (tree / volcano_release.JOB_PLUGINS_FACTORY).unlink()
    assert volcano_release.read(tree) is None


def test_a_registration_the_reader_cannot_name_makes_the_factory_unreadable(tmp_path: pathlib.Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    jobs = tree / volcano_release.JOB_PLUGINS_FACTORY
    jobs.write_text(jobs.read_text().replace('RegisterPluginBuilder("svc", svc.New)', "RegisterPluginBuilder(svc.Name, svc.New)"))
    assert volcano_release.read(tree) is None


def test_a_release_without_the_ray_plugin_does_not_claim_the_ray_scenarios(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VCK_VOLCANO_WORKDIR", str(tmp_path))
    impl = volcano.Volcano("v1.12.4")

    def resolved(progress: object = None) -> None:  # the release's binaries and source, at hand
        impl._bins, impl._source = {}, TREE

    monkeypatch.setattr(impl, "_resolve", resolved)
    ray = loader.load_file(data.scenarios() / "plugins" / "ray-head-service.yaml")
    assert "jobplugin:ray" in ray.capabilities()
    assert "jobplugin:ray" in ray.capabilities() - impl.capabilities()
    env = loader.load_file(next((data.scenarios() / "plugins").glob("env-*.yaml")))
    assert not {c for c in env.capabilities() - impl.capabilities() if c.startswith("jobplugin:")}


def test_an_installed_release_claims_what_its_source_registers_where_the_source_is_at_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def source_dir(version: str, progress: object = None) -> pathlib.Path:
        asked.append(version)
        if version == "v1.11.2":
            raise errors.ToolchainError("download volcano.sh/volcano@v1.11.2", "403 Forbidden")
        return TREE

    monkeypatch.setattr(volcano_resolve, "source_dir", source_dir)
    helm = registry.implementation("volcano-helm:tag=v1.12.4")
    assert asked == [], "nothing is read before the claims are asked for"
    assert "jobplugin:ray" not in helm.capabilities() and "action:allocate" in helm.capabilities()
    assert asked == ["v1.12.4"]
    # Without the source (offline, no module proxy), and for a tag that is not a release: the file's.
    assert volcano.release_claims("v1.11.2") == volcano.claims()
    assert volcano.release_claims("ci-build-42") == volcano.claims() and asked == ["v1.12.4", "v1.11.2"]
