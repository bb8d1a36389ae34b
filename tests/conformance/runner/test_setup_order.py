"""A scenario's setup on a real API server (runner.steps.apply_setup): a child Queue whose parent
is created earlier in the same setup is created only once the parent is seen Open, and a parent
nobody opens fails the setup in a wait step's words. No implementation runs in the cluster: the
test opens the parent itself, as a queue controller would."""

from __future__ import annotations

import os
import threading
from typing import Any, Iterator

import kubernetes
import pytest

from conformance.cluster import resources
from conformance.impl import queues
from conformance.runner import steps
from tests.clusters import OwnCluster
from tests.conformance.runner import step_contexts

pytestmark = pytest.mark.cluster

QUEUE = resources.lookup("Queue")


@pytest.fixture
def step_context(own_cluster: OwnCluster) -> Iterator[steps.StepContext]:
    with step_contexts.reference_crds_context(own_cluster, [QUEUE], 0.1) as ctx:  # a 3 s wait for a parent
        try:
            yield ctx
        finally:
            for _, name in reversed(ctx.created_cluster_objects):
                ctx.client.delete(QUEUE, name, None)


def queue(name: str, parent: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": 1, **({"parent": parent} if parent else {})}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def test_a_child_queue_waits_for_its_parent_to_be_open(own_cluster: OwnCluster, step_context: steps.StepContext, monkeypatch: pytest.MonkeyPatch) -> None:
    parent, child, other = (f"{n}-{os.getpid()}" for n in ("parent", "child", "other"))
    client = step_context.client
    seen_at_create: dict[str, str | None] = {}
    create = client.create

    def recording_create(kind: resources.Kind, body: Any, namespace: str | None, dry_run: bool = False) -> dict[str, Any]:
        if body["spec"].get("parent") == parent:
            seen_at_create[body["metadata"]["name"]] = client.get(QUEUE, parent, None).get("status", {}).get("state")
        return create(kind, body, namespace, dry_run)

    monkeypatch.setattr(client, "create", recording_create)

    def open_parent() -> None:  # as the queue controller: once the parent exists, open it
        custom = kubernetes.client.CustomObjectsApi(own_cluster.api)
        watch = kubernetes.watch.Watch()
        for event in watch.stream(custom.list_cluster_custom_object, *queues.QUEUES, field_selector=f"metadata.name={parent}", timeout_seconds=60):
            if event["type"] == "ADDED":
                custom.patch_cluster_custom_object_status(*queues.QUEUES, parent, {"status": {"state": "Open"}})
                watch.stop()

    opener = threading.Thread(target=open_parent)
    opener.start()
    try:
        steps.apply_setup(step_context, [queue(parent), queue(child, parent), queue(other, "root")])
    finally:
        opener.join()
    assert seen_at_create == {child: "Open"}
    assert [name for _, name in step_context.created_cluster_objects] == [parent, child, other]


def test_a_parent_nobody_opens_fails_the_setup(step_context: steps.StepContext) -> None:
    parent, child = f"shut-{os.getpid()}", f"shut-child-{os.getpid()}"
    with pytest.raises(steps.StepFailed, match=rf"timed out waiting: .*Queue.*{parent}.*Open"):
        steps.apply_setup(step_context, [queue(parent), queue(child, parent)])
    assert [name for _, name in step_context.created_cluster_objects] == [parent]


def test_the_cluster_objects_a_scenario_made_and_only_those_are_left_to_its_cleanup(step_context: steps.StepContext) -> None:
    """A cluster-scoped object is noted before it is sent (so an interruption while it is stored
    still leaves it to the cleanup), and the note is taken back when the API says it stored
    nothing: one that was there already (409) is not the scenario's to delete, nor a refused one."""
    steps.apply(step_context, queue("noted"), None, "noted")
    assert [name for _, name in step_context.created_cluster_objects] == ["noted"]
    with pytest.raises(kubernetes.client.ApiException) as already:
        steps.apply(step_context, queue("noted"), None, "noted again")
    assert already.value.status == 409
    refused = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "Not_A_Name"}, "spec": {"weight": 1}}
    check = steps.apply(step_context, refused, r"Not_A_Name", "refused")
    assert check is not None and check.passed, check
    assert [name for _, name in step_context.created_cluster_objects] == ["noted"]


def test_a_cluster_object_stored_as_the_run_is_interrupted_is_left_to_the_cleanup(step_context: steps.StepContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C after the API stored the object, before the kit's call returned: the cleanup still
    knows it (a dev session's cluster outlives the run; the next scenario would find it)."""
    real_create = step_context.client.create

    def stored_then_interrupted(*args: Any, **kwargs: Any) -> Any:
        real_create(*args, **kwargs)
        raise KeyboardInterrupt("SIGINT")

    monkeypatch.setattr(step_context.client, "create", stored_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        steps.apply(step_context, queue("interrupted"), None, "interrupted")
    assert [name for _, name in step_context.created_cluster_objects] == ["interrupted"]
