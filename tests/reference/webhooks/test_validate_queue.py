"""The reference queue webhook's rules (webhooks/validate_queue.py), as Volcano's validate_queue.go:
a Queue's deserved share and guarantee may not exceed its capability; a parent must exist (root
needs none), a queue with no child yet that runs pods (its status.allocated counts them) cannot
become one, and a queue with children, `default` or `root` cannot be deleted; an update judges the
hierarchy only when it moves the queue; the hierarchy annotations of hierarchical DRF."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.webhooks import review, validate_queue


def q(name: str, parent: str = "", pods: str | None = None) -> dict[str, Any]:
    made: dict[str, Any] = {"metadata": {"name": name}, "spec": {"weight": 1}}
    if parent:
        made["spec"]["parent"] = parent
    if pods is not None:
        made["status"] = {"state": "Open", "allocated": {"cpu": "1", "memory": "0", "pods": pods}}
    return made


CLUSTER = [q("root"), q("default"), q("busy", pods="2"), q("idle", pods="0"), q("never-ran"), q("team"), q("member", parent="team", pods="1"), q("team-busy", pods="3"), q("inside", parent="team-busy")]


def lookup(name: str) -> dict[str, Any] | None:
    return next((x for x in CLUSTER if x["metadata"]["name"] == name), None)


def listing() -> list[dict[str, Any]]:
    return CLUSTER


@pytest.mark.parametrize(
    ("queue", "refusal"),
    [
        (q("new"), ""),
        (q("new", parent="root"), ""),
        (q("new", parent="busy"), "queue busy cannot be the parent queue of queue new because it has allocated Pods: 2"),
        (q("new", parent="idle"), ""),
        (q("new", parent="never-ran"), ""),
        # A parent that has children already is not a leaf: its own pods do not stop another child.
        (q("new", parent="team-busy"), ""),
        (q("new", parent="ghost"), 'failed to get parent queue of queue new: queue.scheduling.volcano.sh "ghost" not found'),
    ],
    ids=["no-parent", "root", "busy-leaf", "idle-leaf", "never-ran", "parent-with-children", "missing"],
)
def test_a_parent_must_exist_and_not_run_pods_of_its_own(queue: dict[str, Any], refusal: str) -> None:
    assert validate_queue.validate_hierarchy(queue, lookup, listing) == refusal


@pytest.mark.parametrize(
    ("name", "refusal"),
    [
        ("default", "`default` queue can not be deleted"),
        ("root", "`root` queue can not be deleted"),
        ("team", "queue team can not be deleted because it has 1 child queues: member"),
        ("busy", ""),
        ("member", ""),
    ],
)
def test_deletion(name: str, refusal: str) -> None:
    assert validate_queue.validate_delete(name, lookup, listing) == refusal


def _review(handlers: review.Handlers, operation: str, obj: dict[str, Any] | None, old: dict[str, Any] | None = None, name: str = "") -> dict[str, Any]:
    request = {"uid": "u1", "operation": operation, "object": obj, "oldObject": old, "name": name or (obj or old or {}).get("metadata", {}).get("name", "")}
    return handlers.validate_queue(request)


def test_the_handler_judges_the_hierarchy_on_create_and_on_a_move_only() -> None:
    handlers = review.Handlers(lookup, listing, "volcano", queue_any_state=lookup)
    assert not _review(handlers, "CREATE", q("new", parent="busy"))["allowed"]
    # An update that keeps the parent is not judged again (the parent may have started pods since).
    assert _review(handlers, "UPDATE", q("x", parent="busy"), old=q("x", parent="busy"))["allowed"]
    moved = _review(handlers, "UPDATE", q("x", parent="busy"), old=q("x"))
    assert not moved["allowed"] and "cannot be the parent queue of queue x" in moved["status"]["message"]
    deleted = _review(handlers, "DELETE", None, old=q("team"), name="team")
    assert not deleted["allowed"] and deleted["status"]["message"].startswith("queue team can not be deleted")
    # The resource rules still come first.
    bad = q("new", parent="ghost")
    bad["spec"]["weight"] = -1
    assert "queue weight must be a positive integer" in _review(handlers, "CREATE", bad)["status"]["message"]


def annotated(name: str, hierarchy: str, weights: str) -> dict[str, Any]:
    made = q(name)
    made["metadata"]["annotations"] = {validate_queue.HIERARCHY: hierarchy, validate_queue.HIERARCHY_WEIGHTS: weights}
    return made


TREE = [annotated("sci-dev", "root/sci/dev", "1/2/3"), annotated("eng", "root/eng", "1/1"), q("plain")]
PATH = "requestBody.metadata.annotations: Invalid value: "


@pytest.mark.parametrize(
    ("queue", "refusal"),
    [
        (q("plain"), ""),
        (annotated("art", "root/art", "1/4"), ""),
        (annotated("scidev", "root/scidev", "1/1"), ""),  # whole parts: root/sci/dev is not under root/scidev
        (annotated("eng", "root/eng", "1/2"), ""),  # its own path, updated
        (annotated("art", "root/art", "1"), f'{PATH}"root/art": volcano.sh/hierarchy must have the same length with volcano.sh/hierarchy-weights'),
        (annotated("art", "root/art", "1/x"), f'{PATH}"1/x": x in the 1/x is invalid number: strconv.ParseFloat: parsing "x": invalid syntax'),
        (annotated("art", "root/art", "1/0"), f'{PATH}"1/0": 0 in the 1/0 must be larger than 0'),
        (annotated("art", "root/art", "1/-2.5"), f'{PATH}"1/-2.5": -2.5 in the 1/-2.5 must be larger than 0'),
        (annotated("sci", "root/sci", "1/2"), f'{PATH}"root/sci": root/sci is not allowed to be in the sub path of root/sci/dev of queue sci-dev'),
    ],
    ids=["none", "new-branch", "prefix-not-a-part", "own-path", "lengths", "not-a-number", "zero", "negative", "parent-of-a-leaf"],
)
def test_hierarchy_annotations(queue: dict[str, Any], refusal: str) -> None:
    assert validate_queue.validate_annotations(queue, lambda: TREE) == refusal


def test_the_handler_judges_the_annotations_on_create_and_update() -> None:
    handlers = review.Handlers(lookup, lambda: TREE, "volcano", queue_any_state=lookup)
    created = _review(handlers, "CREATE", annotated("sci", "root/sci", "1/2"))
    assert not created["allowed"] and "is not allowed to be in the sub path of root/sci/dev" in created["status"]["message"]
    updated = _review(handlers, "UPDATE", annotated("eng", "root/eng", "1/0"), old=annotated("eng", "root/eng", "1/1"))
    assert not updated["allowed"] and "must be larger than 0" in updated["status"]["message"]


def queue(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "q"}, "spec": {"weight": 1, **spec}}


@pytest.mark.parametrize(
    ("spec", "refusal"),
    [
        ({"deserved": {"cpu": "2"}, "capability": {"cpu": "2"}}, ""),
        ({"deserved": {"cpu": "3"}}, ""),  # no capability: no cap
        ({"deserved": {"cpu": "2"}, "guarantee": {"resource": {"cpu": "2"}}}, ""),
        ({"deserved": {"cpu": "3"}, "capability": {"cpu": "2"}}, 'requestBody.spec.deserved.cpu: Invalid value: "3": deserved[cpu]=3 must be <= capability[cpu]=2'),
        # A resource the capability leaves out is unlimited (v1.14.2; before, it counted as zero).
        ({"deserved": {"memory": "1Gi"}, "capability": {"cpu": "2"}}, ""),
        # The guarantee is held to the deserved share only, resource by resource.
        ({"guarantee": {"resource": {"cpu": "3"}}, "deserved": {"cpu": "3"}, "capability": {"cpu": "2"}}, "deserved[cpu]=3 must be <= capability[cpu]=2"),
        ({"deserved": {"cpu": "1"}, "guarantee": {"resource": {"cpu": "2"}}}, 'requestBody.spec.deserved.cpu: Invalid value: "1": deserved[cpu]=1 must be >= guarantee[cpu]=2'),
        ({"guarantee": {"resource": {"cpu": "1"}}}, 'requestBody.spec.deserved.cpu: Invalid value: "<nil>": deserved[cpu] must be >= guarantee[cpu]=1'),
        ({"deserved": {"memory": "1024Mi"}, "guarantee": {"resource": {"memory": "2048Mi"}}}, "deserved[memory]=1Gi must be >= guarantee[memory]=2Gi"),
        ({"capability": {"cpu": "-1"}}, 'requestBody.spec.capability.cpu: Invalid value: "-1": must be greater than or equal to 0'),
        # Two broken rules: both, as Kubernetes aggregates field errors.
        ({"deserved": {"cpu": "1"}, "guarantee": {"resource": {"cpu": "2", "memory": "1Gi"}}}, "[requestBody.spec.deserved.cpu"),
    ],
)
def test_queue_resources(spec: dict[str, Any], refusal: str) -> None:
    """Volcano's validateResourceQuantityOfQueue as from v1.14.2
    (pkg/webhooks/admission/queues/validate/validate_queue.go)."""
    message = validate_queue.validate(queue(**spec))
    assert (refusal in message) if refusal else message == "", message
    assert bool(message) is bool(refusal)
