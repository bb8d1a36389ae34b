"""Node steps that change a node's taints: `taint` adds one, `untaint` removes those of a key and
effect (and value, when given), and says so when the node has none to remove."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.runner import steps
from tests.conformance.expect import states


class Nodes:
    """The part of the kit's API client a node step uses, over one node held in memory."""

    def __init__(self, taints: list[dict[str, Any]]) -> None:
        self.node: dict[str, Any] = {"metadata": {"name": "n0"}, "spec": {"taints": taints}}

    def get(self, kind: object, name: str, namespace: str | None) -> dict[str, Any]:
        return self.node

    def patch(self, kind: object, name: str, namespace: str | None, patch: dict[str, Any]) -> dict[str, Any]:
        self.node["spec"].update(patch["spec"])
        return self.node


def context(client: Nodes) -> steps.StepContext:
    return steps.StepContext(client=client, namespace="ns", rec=states.FakeRecorder(), time_scale=1.0)  # type: ignore[arg-type]


GPU = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
ZONE = {"key": "zone", "value": "a", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("action", "taint", "left"),
    [
        ("taint", {"key": "maint", "effect": "NoExecute"}, [GPU, ZONE, {"key": "maint", "effect": "NoExecute"}]),
        ("untaint", {"key": "gpu", "effect": "NoSchedule"}, [ZONE]),
        ("untaint", {"key": "zone", "value": "a", "effect": "NoSchedule"}, [GPU]),
    ],
)
def test_taints_are_added_and_removed(action: str, taint: dict[str, str], left: list[dict[str, str]]) -> None:
    client = Nodes([dict(GPU), dict(ZONE)])
    steps._node(context(client), {"name": "n0", "action": action, "taint": taint})
    assert client.node["spec"]["taints"] == left


@pytest.mark.parametrize("taint", [{"key": "gpu", "effect": "NoExecute"}, {"key": "zone", "value": "b", "effect": "NoSchedule"}])
def test_removing_a_taint_the_node_does_not_have_fails_the_step(taint: dict[str, str]) -> None:
    client = Nodes([dict(GPU), dict(ZONE)])
    with pytest.raises(steps.StepFailed, match="node n0 has no taint .* to remove"):
        steps._node(context(client), {"name": "n0", "action": "untaint", "taint": taint})
    assert client.node["spec"]["taints"] == [GPU, ZONE]
