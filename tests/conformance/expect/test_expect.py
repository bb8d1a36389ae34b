"""Predicates and windows judged on in-memory states (the recorder's View), no cluster needed."""

from __future__ import annotations

import datetime
import threading
from typing import Any

import pytest

from conformance.expect import figures, judge, predicates, select
from conformance.scenario import models
from tests.conformance.expect import states

POD, PODGROUP, NODE, EVENT = states.POD, states.PODGROUP, states.NODE, states.EVENT
pod, view, pred, FakeRecorder = states.pod, states.view, states.pred, states.FakeRecorder


STATE = view(
    (POD, pod("j-worker-0", "j", phase="Running", node="n0")),
    (POD, pod("j-worker-1", "j", phase="Running", node="n1")),
    (POD, pod("j-worker-2", "j")),
    (POD, pod("other-0", "other", phase="Running", node="n0")),
    (NODE, {"metadata": {"name": "n0", "labels": {"zone": "a"}}}),
    (NODE, {"metadata": {"name": "n1", "labels": {"zone": "b"}}}),
    (PODGROUP, {"metadata": {"name": "j-1234", "namespace": "ns", "ownerReferences": [{"kind": "Job", "name": "j"}]},
                "status": {"phase": "Running", "conditions": [{"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": "1/3 tasks in gang unschedulable"}]}}),
    (EVENT, {"metadata": {"name": "e1", "namespace": "ns"}, "involvedObject": {"kind": "PodGroup", "name": "j-1234"}, "reason": "Unschedulable", "type": "Warning", "message": "1/3 tasks in gang unschedulable"}),
)


@pytest.mark.parametrize(
    ("predicate", "holds"),
    [
        (pred("pods", select={"job": "j"}, count=3), True),
        (pred("pods", select={"job": "j"}, phase="Running", count=2), True),
        (pred("pods", select={"job": "j"}, bound=True, count={"min": 3}), False),
        (pred("pods", select={"job": "j"}, bound=False, count=1), True),
        (pred("pods", select={"job": "j", "node": "n0"}, count=1), True),
        (pred("pods", select={"names": ["j-worker-2"]}, phase="Pending", count=1), True),
        (pred("phase", object={"kind": "PodGroup", "job": "j"}, **{"is": "Running"}), True),
        (pred("phase", object={"kind": "PodGroup", "job": "missing"}, **{"is": "Running"}), False),
        (pred("phase", object={"kind": "PodGroup", "name": "j-1234"}, **{"in": ["Pending", "Inqueue"]}), False),
        (pred("condition", object={"kind": "PodGroup", "job": "j"}, type="Unschedulable", status="True", reason="NotEnoughResources", message=r"\d+/3 tasks"), True),
        (pred("condition", object={"kind": "PodGroup", "job": "j"}, type="Unschedulable", reason="Other"), False),
        (pred("event", object={"kind": "PodGroup", "job": "j"}, reason="Unschedulable", message="gang"), True),
        (pred("event", reason="Scheduled"), False),
        (pred("object", object={"kind": "Pod", "name": "j-worker-1"}, fields={"spec.containers[0].env[name=VC_TASK_INDEX].value": "1", "spec.nodeName": "n1"}), True),
        (pred("object", object={"kind": "Pod", "name": "j-worker-1"}, fields={"spec.containers[name=main].env[name=VC_TASK_INDEX].value": "2"}), False),
        (pred("object", object={"kind": "Pod", "name": "j-worker-1"}, fields={"spec.hostname": {"exists": False}, "metadata.name": {"matches": "^j-"}}), True),
        (pred("object", object={"kind": "Pod", "name": "nope"}, exists=False), True),
        (pred("placement", select={"job": "j"}, rule="distinct-nodes"), True),
        (pred("placement", select={"job": "j"}, rule="same-node"), False),
        (pred("placement", select={"job": "j"}, rule="same-label", label="zone"), False),
        (pred("placement", select={"names": ["j-worker-0", "other-0"]}, rule="same-label", label="zone"), True),
        (pred("ratio", numerator={"select": {"job": "j"}, "phase": "Running", "count": 0}, denominator={"select": {"job": "other"}, "count": 0}, value=2.0, tolerance=0.1), True),
        (pred("ratio", numerator={"select": {"job": "j"}, "count": 0}, denominator={"select": {"job": "other"}, "count": 0}, value=2.0, tolerance=0.5), False),
    ],
)
def test_predicates(predicate: models.Predicate, holds: bool) -> None:
    outcome = predicates.evaluate(predicate, STATE)
    assert outcome.holds is holds, outcome.observed
    assert outcome.observed


def test_within_passes_as_soon_as_it_holds_and_never_fails_at_the_first_violation() -> None:
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a", phase="Running", node="n0"), 1.0)
    check = judge.over_window(rec, pred("pods", select={"job": "a"}, phase="Running", count=1), "within", 10, "runs")
    assert check.passed and check.at_s == 1.0
    never = judge.over_window(rec, pred("pods", select={"job": "a"}, bound=True, count={"min": 1}), "never", 10, "never bound")
    assert not never.passed and "held at" in never.observed


def test_never_passes_when_the_window_closes_without_it() -> None:
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a"), 0.0)

    def advance() -> None:
        with rec.cond:
            rec.clock_value = 100.0
            rec.cond.notify_all()

    timer = threading.Timer(0.05, advance)
    timer.start()
    check = judge.over_window(rec, pred("pods", select={"job": "a"}, bound=True, count={"min": 1}), "never", 5, "never bound")
    timer.join()
    assert check.passed, check


def test_within_fails_with_what_was_last_seen() -> None:
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a"), 0.0)

    def later() -> None:
        rec.feed(pod("a-1", "a"), 1.0)
        rec.advance(100.0)

    threading.Timer(0.05, later).start()
    check = judge.over_window(rec, pred("pods", select={"job": "a"}, phase="Running", count=2), "within", 5, "both run")
    assert not check.passed
    assert check.observed.startswith("not by 5s") and "Pending 2" in check.observed


@pytest.mark.parametrize(("mode", "passed"), [("within", True), ("never", False)])
def test_a_state_that_came_and_went_while_the_judge_waited_is_judged(mode: str, passed: bool) -> None:
    """Under load the watch threads can apply a short-lived state and the next before the judge
    wakes: a Running pod deleted at once still ran, and `within` must see it (and `never` too)."""
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a"), 0.0)

    def both_at_once() -> None:
        with rec.cond:  # the judge cannot run between the two changes
            rec.feed(pod("a-0", "a", phase="Running", node="n0"), 1.0)
            rec.feed(pod("a-0", "a", phase="Running", node="n0"), 1.5, event="DELETED")

    threading.Timer(0.05, both_at_once).start()
    check = judge.over_window(rec, pred("pods", select={"job": "a"}, phase="Running", count=1), mode, 5, "ran")
    assert check.passed is passed, check
    assert check.at_s == 1.0, check


def test_a_change_after_the_window_closed_is_not_judged() -> None:
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a"), 0.0)
    threading.Timer(0.05, lambda: rec.feed(pod("a-0", "a", phase="Running", node="n0"), 6.0)).start()
    check = judge.over_window(rec, pred("pods", select={"job": "a"}, phase="Running", count=1), "within", 5, "runs")
    assert not check.passed and "Pending 1" in check.observed, check


def test_between_sees_a_reaction_that_came_before_the_kit_noted_the_step_end() -> None:
    """On a busy machine the implementation can react to a step, and move on, before the kit has
    noted the step's end: `between` reads the history from the step's start."""
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a"), 0.0)  # the step starts at 0.5 and is noted ended at 2.0
    rec.feed(pod("a-0", "a", phase="Running", node="n0"), 1.0)
    rec.feed(pod("a-0", "a", phase="Succeeded", node="n0"), 1.5)
    rec.advance(3.0)
    running = pred("pods", select={"job": "a"}, phase="Running", count=1)
    assert judge.between(rec, running, 2.0, 0, 0.0, 5.0, "ran", began_s=0.5).passed
    too_soon = judge.between(rec, running, 2.0, 0, 1.0, 5.0, "ran, not at once", began_s=0.5)
    assert not too_soon.passed and "before step 1 ended" in too_soon.observed, too_soon
    # Read from the end alone, the short-lived state is missed: what the change fixes.
    rec.advance(8.0)
    assert not judge.between(rec, running, 2.0, 0, 0.0, 5.0, "ran").passed


def test_between_takes_no_state_that_held_before_the_step_as_its_reaction() -> None:
    """A wait step's start may come before the recorder saw the object at all: "it does not exist"
    holds then, and is no reaction to the step (a TTL deletion judged from a wait for Completed)."""
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a"), 1.0)  # the step began at 0.5, before the pod was observed
    rec.feed(pod("a-0", "a", phase="Succeeded", node="n0"), 2.0)  # the step ends at 2.5
    rec.feed(pod("a-0", "a", phase="Succeeded", node="n0"), 6.0, event="DELETED")
    gone = pred("object", object={"kind": "Pod", "name": "a-0"}, exists=False)
    check = judge.between(rec, gone, 2.5, 0, 1.0, 10.0, "deleted, not at once", began_s=0.5)
    assert check.passed and "first held 3.5s after" in check.observed, check


@pytest.mark.parametrize(("time_scale", "deleted_at", "passed"), [(1.0, 7.0, True), (2.0, 7.0, True), (2.0, 29.0, True), (2.0, 37.0, False), (0.5, 11.0, True), (0.5, 14.5, False), (2.0, 5.5, False)])
def test_between_keeps_its_from_as_the_implementations_time_under_a_time_scale(time_scale: float, deleted_at: float, passed: bool) -> None:
    """`between: [5s, 20s]`: FROM is the implementation's timer (a TTL here), which a slow cluster
    does not stretch; only the room after it (15 s) is the kit's and scaled. A TTL that fired on
    time at 6 s after the step passes on a run stretched twice (scaling FROM to 10 s judged it too
    soon), and 4.5 s after it is still too soon however stretched."""
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a", phase="Succeeded", node="n0"), 0.5)
    rec.feed(pod("a-0", "a", phase="Succeeded", node="n0"), deleted_at, event="DELETED")
    rec.advance(deleted_at + 30)
    gone = models.Expectation(mode="between", window_s=20.0, describe="deleted by its TTL", predicate=pred("object", object={"kind": "Pod", "name": "a-0"}, exists=False), since_step=0, between_s=(5.0, 20.0))
    check = judge.expectation(rec, gone, time_scale, step_ends=[1.0], step_starts=[0.9])
    assert check.passed is passed, check
    assert f"between 5s and {5 + 15 * time_scale:g}s" in check.expected, check


def scheduled(name: str, at_epoch: int, phase: str = "Running") -> dict[str, Any]:
    """A pod of job a whose PodScheduled condition says it was scheduled at `at_epoch`."""
    stamp = datetime.datetime.fromtimestamp(at_epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = pod(name, "a", phase=phase, node="n0")
    out["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp}]
    return out


SCHEDULED_AT = {"objects": {"kind": "Pod", "job": "a"}, "field": "status.conditions[type=PodScheduled].lastTransitionTime"}


@pytest.mark.parametrize(("evicted_at", "passed", "shown"), [(17.5, True, "first held 15.5s after"), (14.0, False, "held already 12.0s after, too soon"), (40.0, False, "first held 38.0s after, too late")])
def test_between_counts_from_a_time_an_object_states(evicted_at: float, passed: bool, shown: str) -> None:
    """`since: {time_of: ...}`: the window starts at the earliest PodScheduled time of the job's
    pods (2 s on the recorder's line here, the other pod a second later), not at a step's end."""
    rec = FakeRecorder()
    rec.wall_t0 = 1_800_000_000.0
    rec.feed(scheduled("a-1", 1_800_000_003), 3.5)
    rec.feed(scheduled("a-0", 1_800_000_002), 4.0)
    rec.feed(scheduled("a-0", 1_800_000_002, phase="Failed"), evicted_at, "MODIFIED")
    rec.advance(60.0)
    failed = models.Expectation(mode="between", window_s=30.0, describe="evicted after its cooldown", predicate=pred("pods", select={"job": "a"}, phase="Failed", count=1), since_time=SCHEDULED_AT, between_s=(15.0, 30.0))
    check = judge.expectation(rec, failed, 1.0)
    assert check.passed is passed and shown in check.observed, check
    assert "after the time in status.conditions[type=PodScheduled].lastTransitionTime of the first of Pod of job a" in check.expected


def test_between_fails_when_the_time_it_counts_from_is_never_stated() -> None:
    """It is waited for up to TO (the clock passes 35 s while the judge waits), then the check fails."""
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a", phase="Running", node="n0"), 1.0)
    rec.advance(5.0)
    threading.Timer(0.05, lambda: rec.advance(40.0)).start()
    failed = models.Expectation(mode="between", window_s=30.0, describe="", predicate=pred("pods", select={"job": "a"}, count=1), since_time=SCHEDULED_AT, between_s=(0.0, 30.0))
    check = judge.expectation(rec, failed, 1.0)
    assert not check.passed and "no such time to count from within 30s" in check.observed and "no status.conditions[type=PodScheduled].lastTransitionTime in a-0" in check.observed, check


def test_between_waits_for_the_time_it_counts_from() -> None:
    """The anchor is stated only after the check began (the pod scheduled later): counted from it."""
    rec = FakeRecorder()
    rec.wall_t0 = 1_800_000_000.0
    rec.feed(pod("a-0", "a"), 1.0)
    rec.advance(2.0)

    def later() -> None:
        rec.feed(scheduled("a-0", 1_800_000_005), 5.5)
        rec.feed(scheduled("a-0", 1_800_000_005, phase="Failed"), 25.0, "MODIFIED")
        rec.advance(60.0)

    threading.Timer(0.05, later).start()
    failed = models.Expectation(mode="between", window_s=30.0, describe="", predicate=pred("pods", select={"job": "a"}, phase="Failed", count=1), since_time=SCHEDULED_AT, between_s=(15.0, 30.0))
    check = judge.expectation(rec, failed, 1.0)
    assert check.passed and "first held 20.0s after" in check.observed, check


def test_the_time_of_an_object_is_the_last_it_stated() -> None:
    """PodScheduled is False (with its own time) while the pod waits, then True: the True time counts."""
    rec = FakeRecorder()
    rec.wall_t0 = 1_800_000_000.0
    waiting = scheduled("a-0", 1_800_000_001, phase="Pending")
    waiting["status"]["conditions"][0]["status"] = "False"
    rec.feed(waiting, 1.5)
    rec.feed(scheduled("a-0", 1_800_000_010), 10.5)
    anchor, seen = judge.observed_time(rec, SCHEDULED_AT)
    assert anchor == 10.0 and "of a-0" in seen


def test_sequence_and_order_on_history() -> None:
    rec = FakeRecorder()
    rec.feed(pod("a-0", "a", task="first"), 1.0)
    rec.feed(pod("a-0", "a", task="first", phase="Running", node="n0"), 2.0, "MODIFIED")
    rec.feed(pod("a-1", "a", task="second"), 3.0)
    rec.feed(pod("a-0", "a", task="first", phase="Succeeded", node="n0"), 4.0, "MODIFIED")
    seq = models.Expectation(mode="timeline", window_s=0, describe="", timeline_kind="sequence", timeline_spec={"object": {"kind": "Pod", "name": "a-0"}, "phases": ["Pending", "Succeeded"]})
    assert judge.timeline_check(rec, seq).passed
    wrong = models.Expectation(mode="timeline", window_s=0, describe="", timeline_kind="sequence", timeline_spec={"object": {"kind": "Pod", "name": "a-0"}, "phases": ["Succeeded", "Running"]})
    assert not judge.timeline_check(rec, wrong).passed
    order = models.Expectation(mode="timeline", window_s=0, describe="", timeline_kind="order", timeline_spec={
        "first": {"pods": {"select": {"task": "first"}, "phase": "Running", "count": 1}},
        "then": {"pods": {"select": {"task": "second"}, "count": 1}}})
    assert judge.timeline_check(rec, order).passed
    reverse = models.Expectation(mode="timeline", window_s=0, describe="", timeline_kind="order", timeline_spec={
        "first": {"pods": {"select": {"task": "second"}, "count": 1}},
        "then": {"pods": {"select": {"task": "first"}, "phase": "Running", "count": 1}}})
    result = judge.timeline_check(rec, reverse)
    assert not result.passed and "second held at 2.0s" in result.observed


@pytest.mark.parametrize(
    ("history", "passed", "shown"),
    [
        (["Pending", "Running", "Succeeded"], True, "Pending -> Running -> Succeeded"),
        # Running again after it succeeded: what `never_after` forbids.
        (["Pending", "Running", "Succeeded", "Running"], False, "(after Succeeded: Running)"),
        # Running before it succeeded is allowed; Running after it, not.
        (["Running", "Pending", "Succeeded", "Pending"], True, "Running -> Pending -> Succeeded -> Pending"),
        (["Pending", "Running"], False, "Pending -> Running"),
    ],
)
def test_sequence_never_after_judges_only_what_came_once_the_order_was_reached(history: list[str], passed: bool, shown: str) -> None:
    rec = FakeRecorder()
    for at, phase in enumerate(history, start=1):
        rec.feed(pod("a-0", "a", phase=phase, node=None if phase == "Pending" else "n0"), float(at), "MODIFIED" if at > 1 else "ADDED")
    once_done = models.Expectation(mode="timeline", window_s=0, describe="", timeline_kind="sequence", timeline_spec={"object": {"kind": "Pod", "name": "a-0"}, "phases": ["Succeeded"], "never_after": ["Running"]})
    check = judge.timeline_check(rec, once_done)
    assert check.passed is passed, check
    assert shown in check.observed and "after Succeeded never Running" in check.expected, check


def gpu_pod(name: str, node: str | None, gpus: str, phase: str = "Running", where: str = "limits") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {select.JOB_NAME_LABEL: "train"}},
        "spec": {"nodeName": node, "containers": [{"name": "main", "resources": {where: {"nvidia.com/gpu": gpus, "cpu": "1"}}}]},
        "status": {"phase": phase},
    }


def gpu_node(name: str, gpus: str | None, supernode: str | None = None) -> dict[str, Any]:
    allocatable = {"cpu": "32"} | ({"nvidia.com/gpu": gpus} if gpus is not None else {})
    labels = {"devices.vck.io/supernode": supernode} if supernode else {}
    return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": allocatable}}


GPU_STATE = view(
    (NODE, gpu_node("full", "8", "supernode-0")),
    (NODE, gpu_node("half", "8", "supernode-0")),
    (NODE, gpu_node("empty", "8", "supernode-1")),
    (NODE, gpu_node("cpu-only", None)),
    (POD, gpu_pod("a", "full", "8")),
    (POD, gpu_pod("b", "half", "2")),
    (POD, gpu_pod("c", "half", "2", where="requests")),
    (POD, gpu_pod("done", "empty", "4", phase="Succeeded")),
    (POD, gpu_pod("waiting", None, "4", phase="Pending")),
    (POD, gpu_pod("cpu", "cpu-only", "0")),
)


def test_fragmented_nodes_counts_partly_taken_nodes_only() -> None:
    measured = figures.measure(GPU_STATE, {"figure": "fragmented", "fragmented_nodes": {"resource": "nvidia.com/gpu"}})
    # full is wholly taken, empty's pod has finished, the pending pod holds nothing: only half.
    assert measured.values == {"fragmented": 1.0}
    assert "fragmented: ['half']" in measured.detail and "half 4/8" in measured.detail


def test_placement_counts_bound_pods_per_label_value() -> None:
    measured = figures.measure(GPU_STATE, {"figure": "train by supernode", "placement": {"select": {"job": "train"}, "by": "devices.vck.io/supernode"}})
    assert measured.values == {"train by supernode: (no label)": 1.0, "train by supernode: supernode-0": 3.0, "train by supernode: supernode-1": 1.0}
    assert "supernode-0: a@full, b@half, c@half" in measured.detail


def test_measure_problems_name_the_step_and_the_missing_figure() -> None:
    doc = {"steps": [
        {"measure": {"figure": "off", "fragmented_nodes": {"resource": "r"}}},
        {"measure": {"figure": "on", "fragmented_nodes": {"resource": "r"}, "less_than": "off"}},
        {"measure": {"figure": "later", "fragmented_nodes": {"resource": "r"}, "at_most": "never measured"}},
        {"measure": {"figure": "where", "placement": {"by": "zone"}, "equals": 2}},
    ]}
    problems = models.measure_problems(doc)
    assert [path for path, _ in problems] == [["steps", 2, "measure", "at_most"], ["steps", 3, "measure", "equals"]]
    assert "'never measured'" in problems[0][1] and "'off', 'on'" in problems[0][1]
