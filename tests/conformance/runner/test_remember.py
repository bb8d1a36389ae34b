"""A `remember` step notes a field's value under a name (one object's, or one per selected object),
and says plainly when there is nothing to note."""

from __future__ import annotations

import pytest

from conformance.runner import steps
from tests.conformance.expect import states


def context() -> steps.StepContext:
    rec = states.FakeRecorder()
    for i, node in enumerate(("n0", "n1")):
        made = states.pod(f"j-worker-{i}", "j", phase="Running", node=node)
        made["metadata"]["uid"] = f"uid-{i}"
        rec.feed(made, float(i))
    rec.feed(states.pod("j-ps-0", "j", task="ps"), 2.0)
    return steps.StepContext(client=None, namespace="ns", rec=rec, time_scale=1.0)  # type: ignore[arg-type]


def test_one_object_or_one_value_per_selected_object() -> None:
    ctx = context()
    steps.remember(ctx, {"as": "first", "field": "metadata.uid", "object": {"kind": "Pod", "name": "j-worker-0"}})
    steps.remember(ctx, {"as": "nodes", "field": "spec.nodeName", "select": {"job": "j", "task": "worker"}})
    assert ctx.rec.memory["first"].single == "uid-0" and ctx.rec.memory["first"].per_name is None
    assert ctx.rec.memory["nodes"].per_name == {"j-worker-0": "n0", "j-worker-1": "n1"}
    assert ctx.rec.memory["nodes"].source == 'spec.nodeName of pods matching {"job": "j", "task": "worker"}'
    # The timeline shows what was noted, when.
    assert ctx.rec.steps[-1].name == "remembered nodes" and ctx.rec.steps[-1].summary == {"remembered": {"nodes": {"j-worker-0": "n0", "j-worker-1": "n1"}}}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"object": {"kind": "Pod", "name": "j-worker-9"}}, "cannot remember metadata.uid of Pod j-worker-9: it does not exist"),
        ({"select": {"job": "other"}}, 'cannot remember metadata.uid of pods matching {"job": "other"}: nothing matches'),
        ({"select": {"job": "j"}}, "cannot remember metadata.uid: j-ps-0 has no such field"),
        ({"object": {"kind": "Pod", "name_matches": "worker"}}, r"cannot remember metadata.uid: the Pod with a name matching 'worker' names one object, but 2 match \(j-worker-0, j-worker-1\)"),
    ],
)
def test_nothing_to_remember_fails_the_step_saying_why(spec: dict[str, object], message: str) -> None:
    ctx = context()
    with pytest.raises(steps.StepFailed, match=message):
        steps.remember(ctx, {"as": "x", "field": "metadata.uid", **spec})
    assert "x" not in ctx.rec.memory


def test_phase_and_bound_narrow_the_selected_pods() -> None:
    """The running pods' uids: j-ps-0 (Pending, no uid) is left out rather than failing the step."""
    ctx = context()
    steps.remember(ctx, {"as": "running", "field": "metadata.uid", "select": {"job": "j"}, "phase": "Running"})
    assert ctx.rec.memory["running"].per_name == {"j-worker-0": "uid-0", "j-worker-1": "uid-1"}
    assert ctx.rec.memory["running"].source == 'metadata.uid of pods matching {"job": "j"} and {"phase": "Running"}'
    steps.remember(ctx, {"as": "unbound", "field": "metadata.name", "select": {"job": "j"}, "bound": False})
    assert ctx.rec.memory["unbound"].per_name == {"j-ps-0": "j-ps-0"}
    with pytest.raises(steps.StepFailed, match="nothing matches"):
        steps.remember(ctx, {"as": "none", "field": "metadata.uid", "select": {"job": "j"}, "phase": "Succeeded"})
