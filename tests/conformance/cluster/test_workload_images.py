"""The workloads' images: a scenario names one by `vck.workload/<name>`, the run puts the image it
built (or the user's) in its place, and a recipe's tag changes exactly when the recipe does."""

from __future__ import annotations

import dataclasses

import pytest

from conformance import config
from conformance.cluster import workload_images

JOB = {
    "kind": "Job",
    "spec": {"tasks": [
        {"name": "master", "template": {"spec": {"containers": [{"name": "m", "image": "vck.workload/mpi"}], "initContainers": [{"name": "i", "image": "busybox"}]}}},
        {"name": "head", "template": {"spec": {"containers": [{"name": "r", "image": "vck.workload/ray"}]}}},
    ]},
}


def test_placeholders_are_found_anywhere_a_container_is() -> None:
    assert workload_images.placeholders(JOB) == {"mpi", "ray"}
    assert workload_images.placeholders([[JOB], {"kind": "ConfigMap", "data": {"image": "not a container"}}]) == {"mpi", "ray"}


def test_each_placeholder_becomes_its_image_and_nothing_else_changes() -> None:
    out = workload_images.substitute(JOB, {"mpi": "vck-workload-mpi:abc", "ray": "rayproject/ray:2.52.1"})
    images = [c["image"] for t in out["spec"]["tasks"] for part in ("containers", "initContainers") for c in t["template"]["spec"].get(part, [])]
    assert images == ["vck-workload-mpi:abc", "busybox", "rayproject/ray:2.52.1"]
    assert JOB["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["image"] == "vck.workload/mpi", "the scenario's own manifest is not changed"
    # A placeholder without an image stays as written: the kubelet's pull failure says which.
    assert workload_images.placeholders(workload_images.substitute(JOB, {"mpi": "x:1"})) == {"ray"}


def test_the_users_images_are_parsed_and_checked() -> None:
    assert workload_images.parse_user_images("mpi=reg/mpi:1, ray=rayproject/ray:2.52.1") == {"mpi": "reg/mpi:1", "ray": "rayproject/ray:2.52.1"}
    assert workload_images.parse_user_images(None) == {}
    with pytest.raises(ValueError, match="no workload image 'tensorflow'; the kit's are mpi, ray, torch"):
        workload_images.parse_user_images("tensorflow=x:1")
    with pytest.raises(ValueError, match="expected NAME=IMAGE"):
        workload_images.parse_user_images("mpi")
    assert any("no workload image 'tensorflow'" in p for p in config.RunConfig(workload_images="tensorflow=x:1").validate_settings())


def test_a_recipes_tag_is_its_digest_and_pins_every_package() -> None:
    for recipe in workload_images.RECIPES.values():
        assert recipe.tag().startswith(f"vck-workload-{recipe.name}:") and recipe.tag() == recipe.tag()
        changed = dataclasses.replace(recipe, debian=(*recipe.debian, "less"))
        assert changed.tag() != recipe.tag()
        # Every PyPI package at one version, installed without resolving: nothing floats.
        assert all("==" in p for p in recipe.pypi), recipe.pypi
    # Every Debian package at one version too.
    assert all("=" in p for recipe in workload_images.RECIPES.values() for p in recipe.debian), [r.debian for r in workload_images.RECIPES.values()]


def test_a_gpu_request_anywhere_in_a_container_is_found() -> None:
    """What makes the run put the fake device plugin on kind's workers."""
    gpu = {"spec": {"tasks": [{"template": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}]}}
    assert workload_images.requests_resource([[gpu]], "nvidia.com/gpu")
    assert not workload_images.requests_resource(JOB, "nvidia.com/gpu")
    assert not workload_images.requests_resource({"data": {"nvidia.com/gpu": "2"}}, "nvidia.com/gpu"), "a ConfigMap's key is not a request"
