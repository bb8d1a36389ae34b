"""A dev session on nodes that run containers (kind's --kind-workers, an existing cluster's
--lend-nodes) is given, at `vck dev up`, the workload images of every scenario that fits on those
nodes, so that `vck run --dev` runs them as `vck run` would (not "not applicable: images not
prepared"). Which scenarios it will be asked to run is not known when it starts."""

from __future__ import annotations

from conformance import config as run_config
from conformance.api import dev

USERS = "mpi=registry.example/mpi:1,torch=registry.example/torch:1,ray=registry.example/ray:1"


def session(backend: run_config.BackendConfig, images: str | None = USERS) -> run_config.RunConfig:
    return run_config.RunConfig(backend=backend, workload_images=images)


def real(capacity: int) -> set[str]:
    """The shipped scenarios that fit on `capacity` real nodes, as the scenarios say it."""
    return {sc.id for sc in run_config.RunConfig().selected() if 0 < sc.real_nodes <= capacity}


def test_a_session_lending_two_nodes_gets_the_images_of_every_scenario_that_fits() -> None:
    config = session(run_config.BackendConfig(name="existing", kubeconfig="unused", lend_nodes=2))
    ids = dev.session_workload_images(config, lambda _: None)
    assert set(ids) == real(2) and len(ids) >= 8, ids
    assert config.backend.images == {"mpi": "registry.example/mpi:1", "torch": "registry.example/torch:1", "ray": "registry.example/ray:1"}
    # Written into the configuration the session process is started with.
    assert run_config.RunConfig.from_json(config.to_json()).backend.images == config.backend.images


def test_one_lent_node_takes_only_the_scenarios_of_one_node() -> None:
    config = session(run_config.BackendConfig(name="existing", kubeconfig="unused", lend_nodes=1))
    ids = dev.session_workload_images(config, lambda _: None)
    assert set(ids) == real(1) and real(1) < real(2), ids
    # Every one-node workload runs the mpi image: only that one is the session's.
    assert config.backend.images == {"mpi": "registry.example/mpi:1"}


def test_a_session_on_simulated_nodes_prepares_no_image() -> None:
    config = session(run_config.BackendConfig(name="embedded"))
    assert dev.session_workload_images(config, lambda _: None) == [] and config.backend.images == {}
