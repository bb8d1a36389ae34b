"""The judge's verbs for scenario authors (issue 18), on in-memory states: selection by generated
name, labels, node labels and HyperNode; `every`; JSON and remembered-value comparisons; windows
anchored at a step (`never_since`, `between`); phase histories (`without`, `exactly`)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from conformance.cluster import resources
from conformance.expect import hypernodes, judge, predicates, select
from conformance.observe import recorder
from conformance.scenario import models
from tests.conformance.expect import states

POD, NODE, PODGROUP = states.POD, states.NODE, states.PODGROUP
HYPERNODE = resources.lookup("HyperNode")
COMMAND = resources.lookup("Command")
SERVICE = resources.lookup("Service")
pod, view, pred = states.pod, states.view, states.pred


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def hypernode(name: str, member_type: str, *selectors: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"members": [{"type": member_type, "selector": s} for s in selectors]}}


def obj(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "labels": labels}, "spec": {}}


TREE = (
    (HYPERNODE, hypernode("spine", "HyperNode", {"exactMatch": {"name": "leaf-a"}}, {"regexMatch": {"pattern": "^leaf-b$"}})),
    (HYPERNODE, hypernode("leaf-a", "Node", {"exactMatch": {"name": "n0"}}, {"exactMatch": {"name": "n1"}})),
    (HYPERNODE, hypernode("leaf-b", "Node", {"labelMatch": {"matchLabels": {"rack": "b"}}})),
    (HYPERNODE, hypernode("leaf-c", "Node", {"labelMatch": {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["c", "d"]}]}})),
    (HYPERNODE, hypernode("loop", "HyperNode", {"exactMatch": {"name": "loop"}}, {"exactMatch": {"name": "leaf-a"}})),
    (HYPERNODE, hypernode("empty-selector", "Node", {"labelMatch": {}})),
)
NODES = ((NODE, node("n0", rack="a")), (NODE, node("n1", rack="a")), (NODE, node("n2", rack="b")), (NODE, node("n3", rack="c")))


@pytest.mark.parametrize(
    ("name", "nodes"),
    [("leaf-a", {"n0", "n1"}), ("leaf-b", {"n2"}), ("leaf-c", {"n3"}), ("spine", {"n0", "n1", "n2"}), ("loop", {"n0", "n1"}), ("empty-selector", set()), ("missing", set())],
)
def test_the_nodes_under_a_hypernode_follow_its_members_at_any_depth(name: str, nodes: set[str]) -> None:
    state = view(*TREE, *NODES)
    assert hypernodes.nodes_under(state.of(HYPERNODE).values(), state.of(NODE).values(), name) == nodes


PLACED = view(
    *TREE, *NODES,
    (POD, pod("train-worker-0", "train", phase="Running", node="n0")),
    (POD, pod("train-worker-1", "train", phase="Running", node="n2")),
    (POD, pod("train-worker-2", "train", phase="Running", node="n3")),
    (POD, pod("train-ps-0", "train", task="ps")),
)


@pytest.mark.parametrize(
    ("selection", "names"),
    [
        ({"name_matches": "-worker-[01]$"}, ["train-worker-0", "train-worker-1"]),
        ({"node_labels": {"rack": "a"}}, ["train-worker-0"]),
        ({"hypernode": "spine"}, ["train-worker-0", "train-worker-1"]),
        ({"hypernode": "spine", "node_labels": {"rack": "b"}}, ["train-worker-1"]),
        ({"hypernode": "nowhere"}, []),
        ({"job": "train", "name_matches": "ps"}, ["train-ps-0"]),
    ],
)
def test_pods_are_selected_by_name_pattern_node_labels_and_hypernode(selection: dict[str, Any], names: list[str]) -> None:
    assert [p["metadata"]["name"] for p in select.pods(PLACED, selection)] == names


COMMANDS = view(
    (COMMAND, obj("job-a-abortjob-x7k2p")),
    (COMMAND, obj("job-b-resumejob-9fq1z", team="b")),
    (COMMAND, obj("job-b-abortjob-3kd8w", team="b")),
)


def test_a_reference_by_selection_names_the_one_object_it_matches() -> None:
    found = select.resolve(COMMANDS, {"kind": "Command", "name_matches": "^job-a-"})
    assert found is not None and found["metadata"]["name"] == "job-a-abortjob-x7k2p"
    assert select.resolve(COMMANDS, {"kind": "Command", "name_matches": "^job-c-"}) is None
    with pytest.raises(select.Ambiguous, match=r"2 match \(job-b-abortjob-3kd8w, job-b-resumejob-9fq1z\)"):
        select.resolve(COMMANDS, {"kind": "Command", "labels": {"team": "b"}})


@pytest.mark.parametrize(
    ("predicate", "holds", "observed"),
    [
        (pred("object", object={"kind": "Command", "name_matches": "abortjob"}, exists=False), False, "2 match"),
        (pred("object", object={"kind": "Command", "name_matches": "^job-a-abortjob-"}), True, "has every field"),
        (pred("object", object={"kind": "Command", "name_matches": "^job-c-"}, exists=False), True, "does not exist"),
        (pred("object", object={"kind": "Command", "name_matches": "^job-a-"}, exists=False), False, "exists (job-a-abortjob-x7k2p)"),
        (pred("phase", object={"kind": "Command", "labels": {"team": "b"}}, **{"is": "Running"}), False, "2 match"),
    ],
)
def test_a_reference_that_matches_several_objects_does_not_hold(predicate: models.Predicate, holds: bool, observed: str) -> None:
    outcome = predicates.evaluate(predicate, COMMANDS)
    assert outcome.holds is holds and observed in outcome.observed, outcome.observed


TF_CONFIG = '{"cluster":{"ps":["tf-ps-0.tf:2222"],"worker":["tf-worker-0.tf:2222"]},"task":{"type":"worker","index":0}}'


def env_pod(name: str, value: str, phase: str = "Running", uid: str = "u0") -> dict[str, Any]:
    made = pod(name, "tf", phase=phase, node="n0")
    made["metadata"]["uid"] = uid
    made["spec"]["containers"][0]["env"] = [{"name": "TF_CONFIG", "value": value}]
    return made


TF = view(
    (POD, env_pod("tf-worker-0", TF_CONFIG, uid="u-w0")),
    (POD, env_pod("tf-ps-0", TF_CONFIG.replace('"worker","index":0', '"ps","index":0'), uid="u-p0")),
    (POD, env_pod("tf-worker-1", "not json", phase="Pending", uid="u-w1")),
    (SERVICE, obj("tf", **{"volcano.sh/job-name": "tf"})),
    (SERVICE, obj("tf-extra", **{"volcano.sh/job-name": "tf", "role": "extra"})),
    memory={
        "uids": recorder.Remembered("metadata.uid of pods", per_name={"tf-worker-0": "u-w0", "tf-ps-0": "u-old"}),
        "first-uid": recorder.Remembered("metadata.uid of Pod tf-worker-0", single="u-w0"),
        "first-name": recorder.Remembered("metadata.name of Pod tf-worker-0", single="tf-worker-0"),
        "job": recorder.Remembered("metadata.labels.volcano.sh/job-name of Pod tf-worker-0", single="tf"),
    },
)
ENV = "spec.containers[0].env[name=TF_CONFIG].value"


@pytest.mark.parametrize(
    ("predicate", "holds"),
    [
        # JSON: parsed, so spacing and key order do not matter; a string that is no JSON never matches.
        (pred("object", object={"kind": "Pod", "name": "tf-worker-0"}, fields={ENV: {"json": {"task": {"index": 0, "type": "worker"}, "cluster": {"worker": ["tf-worker-0.tf:2222"], "ps": ["tf-ps-0.tf:2222"]}}}}), True),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-0"}, fields={ENV: {"json": {"task": {"type": "worker", "index": 0}}}}), False),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-0"}, fields={ENV: {"json_contains": {"task": {"type": "worker"}}}}), True),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-0"}, fields={ENV: {"json_contains": {"cluster": {"ps": []}}}}), False),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-1"}, fields={ENV: {"json_contains": {}}}), False),
        # Remembered: a single value, or the value noted for the object of the same name.
        (pred("object", object={"kind": "Pod", "name": "tf-worker-0"}, fields={"metadata.uid": {"same_as": "first-uid"}}), True),
        (pred("object", object={"kind": "Pod", "name": "tf-ps-0"}, fields={"metadata.uid": {"same_as": "first-uid"}}), False),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-0"}, fields={"metadata.uid": {"same_as": "uids"}}), True),
        (pred("object", object={"kind": "Pod", "name": "tf-ps-0"}, fields={"metadata.uid": {"differs_from": "uids"}}), True),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-1"}, fields={"metadata.uid": {"same_as": "uids"}}), False),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-1"}, fields={"metadata.uid": {"differs_from": "uids"}}), True),
        (pred("object", object={"kind": "Pod", "name": "tf-worker-0"}, fields={"metadata.uid": {"same_as": "never-remembered"}}), False),
        # every: all selected (phase and bound filter pods), at least `min`.
        (pred("every", select={"job": "tf"}, phase="Running", fields={ENV: {"json_contains": {"cluster": {"ps": ["tf-ps-0.tf:2222"]}}}}), True),
        (pred("every", select={"job": "tf"}, fields={ENV: {"json_contains": {"cluster": {"ps": ["tf-ps-0.tf:2222"]}}}}), False),
        (pred("every", select={"job": "tf"}, phase="Running", min=3, fields={"spec.nodeName": "n0"}), False),
        (pred("every", select={"job": "nobody"}, fields={"spec.nodeName": "n0"}), False),
        (pred("every", select={"names": ["tf-worker-0", "tf-ps-0"]}, fields={"metadata.uid": {"same_as": "uids"}}), False),
        (pred("every", objects={"kind": "Service", "labels": {"volcano.sh/job-name": "tf"}}, min=2, fields={"metadata.namespace": "ns"}), True),
        (pred("every", objects={"kind": "Service", "name_matches": "extra"}, fields={"metadata.labels.role": "main"}), False),
        # A selection's value remembered by an earlier step: one value; several (per object) or
        # none match nothing.
        (pred("pods", select={"names": [{"remembered": "first-name"}]}, phase="Running", count=1), True),
        (pred("pods", select={"job": {"remembered": "job"}}, count=3), True),
        (pred("pods", select={"job": {"remembered": "uids"}}, count={"min": 1}), False),
        (pred("pods", select={"job": {"remembered": "never-remembered"}}, count={"min": 1}), False),
        (pred("object", object={"kind": "Pod", "name": {"remembered": "first-name"}}, fields={"metadata.uid": "u-w0"}), True),
        (pred("every", objects={"kind": "Service", "labels": {"volcano.sh/job-name": {"remembered": "job"}}}, min=2, max=2, fields={"metadata.namespace": "ns"}), True),
        # ... and at most `max`: an exact count with min.
        (pred("every", objects={"kind": "Service", "labels": {"volcano.sh/job-name": "tf"}}, min=2, max=2, fields={"metadata.namespace": "ns"}), True),
        (pred("every", objects={"kind": "Service", "labels": {"volcano.sh/job-name": "tf"}}, max=1, fields={"metadata.namespace": "ns"}), False),
    ],
)
def test_json_remembered_values_and_every(predicate: models.Predicate, holds: bool) -> None:
    outcome = predicates.evaluate(predicate, TF)
    assert outcome.holds is holds, outcome.observed


def test_a_failed_comparison_shows_what_was_remembered_and_which_object_failed() -> None:
    outcome = predicates.evaluate(pred("every", select={"names": ["tf-worker-0", "tf-ps-0"]}, fields={"metadata.uid": {"same_as": "uids"}}), TF)
    assert outcome.observed == '1 of 2 selected do not: tf-ps-0: metadata.uid = "u-p0" (remembered as uids: "u-old")'


JOB = resources.lookup("Job")
COUNTERS = view(
    (JOB, {"metadata": {"name": "omitted", "namespace": "ns"}, "status": {"state": {"phase": "Aborted"}, "succeeded": 1}}),
    (JOB, {"metadata": {"name": "written", "namespace": "ns"}, "status": {"state": {"phase": "Aborted"}, "pending": 0, "running": 0, "terminating": 0}}),
    (JOB, {"metadata": {"name": "busy", "namespace": "ns"}, "status": {"state": {"phase": "Aborting"}, "terminating": 2}}),
)
ZERO = {"absent_or": 0}


@pytest.mark.parametrize(
    ("name", "fields", "holds"),
    [
        # A zero left out (Go's omitempty) and a zero written out are the same answer.
        ("omitted", {"status.pending": ZERO, "status.running": ZERO, "status.terminating": ZERO}, True),
        ("written", {"status.pending": ZERO, "status.running": ZERO, "status.terminating": ZERO}, True),
        ("busy", {"status.terminating": ZERO}, False),
        ("omitted", {"status.succeeded": ZERO}, False),
        ("busy", {"status.terminating": {"absent_or": 2}}, True),
        # "More than zero" is a pattern on the number's text; a left-out zero is not matched.
        ("busy", {"status.state.phase": "Aborting", "status.terminating": {"matches": "^[1-9]"}}, True),
        ("written", {"status.terminating": {"matches": "^[1-9]"}}, False),
        ("omitted", {"status.terminating": {"matches": "^[1-9]"}}, False),
    ],
)
def test_absent_or_takes_a_left_out_zero_for_zero(name: str, fields: dict[str, Any], holds: bool) -> None:
    outcome = predicates.evaluate(pred("object", object={"kind": "Job", "name": name}, fields=fields), COUNTERS)
    assert outcome.holds is holds, outcome.observed


@pytest.mark.parametrize(
    ("created", "boundary", "holds"),
    [
        ("2026-11-28T01:02:00Z", {"every": "1m", "at_most": "10s"}, True),
        ("2026-11-28T01:02:09Z", {"every": "1m", "at_most": "10s"}, True),
        # Created at a random moment of the minute, not at its start.
        ("2026-11-28T01:02:37Z", {"every": "1m", "at_most": "10s"}, False),
        ("2026-11-28T01:02:59Z", {"every": "1m", "at_most": "10s"}, False),
        # Every five minutes: 01:05:03 is 3 s past one; 01:02:03 is not.
        ("2026-11-28T01:05:03Z", {"every": "5m", "at_most": "10s"}, True),
        ("2026-11-28T01:02:03Z", {"every": "5m", "at_most": "10s"}, False),
        # An offset other than Z is the same moment.
        ("2026-11-28T09:02:04+08:00", {"every": "1m", "at_most": "10s"}, True),
        ("not a time", {"every": "1m", "at_most": "10s"}, False),
    ],
)
def test_past_boundary_judges_a_stated_time_against_the_clock(created: str, boundary: dict[str, str], holds: bool) -> None:
    """"The CronJob created its Job at a whole minute": the Job's creationTimestamp, not the
    moment the kit saw it."""
    state = view((JOB, {"metadata": {"name": "cron-1", "namespace": "ns", "creationTimestamp": created}}))
    outcome = predicates.evaluate(pred("object", object={"kind": "Job", "name": "cron-1"}, fields={"metadata.creationTimestamp": {"past_boundary": boundary}}), state)
    assert outcome.holds is holds, outcome.observed


# --- windows anchored at a step -------------------------------------------------------------------------
def running(at: float, rec: states.FakeRecorder) -> None:
    rec.feed(pod("a-0", "a", phase="Running", node="n0"), at, "MODIFIED")


def test_never_since_reads_the_whole_history_from_the_step_on() -> None:
    rec = states.FakeRecorder()
    rec.feed(pod("a-0", "a"), 0.0)
    running(2.0, rec)
    rec.feed(pod("a-0", "a", phase="Succeeded", node="n0"), 5.0, "MODIFIED")
    is_running = pred("pods", select={"job": "a"}, phase="Running", count=1)
    # The state current when the step ended counts: at 3.0 the pod was running.
    late = judge.never_since(rec, is_running, 3.0, 1, "never running")
    assert not late.passed and late.observed.startswith("held at 3.0s (0.0s after step 2)")
    assert judge.never_since(rec, is_running, 6.0, 1, "never running").passed
    early = judge.never_since(rec, is_running, 0.5, 0, "never running")
    assert not early.passed and "held at 2.0s (1.5s after step 1)" in early.observed


def test_between_fails_what_held_too_soon_and_waits_for_what_is_still_to_come() -> None:
    is_running = pred("pods", select={"job": "a"}, phase="Running", count=1)
    rec = states.FakeRecorder()
    rec.feed(pod("a-0", "a"), 0.0)
    running(2.0, rec)
    soon = judge.between(rec, is_running, 0.0, 0, 3.0, 5.0, "runs 3-5 s after")
    assert not soon.passed and "held already 2.0s after, too soon" in soon.observed
    assert judge.between(rec, is_running, 0.0, 0, 1.0, 5.0, "runs 1-5 s after").passed

    later = states.FakeRecorder()
    later.feed(pod("a-0", "a"), 0.0)
    timer = threading.Timer(0.05, running, args=(4.0, later))
    timer.start()
    check = judge.between(later, is_running, 0.0, 0, 3.0, 5.0, "runs 3-5 s after")
    timer.join()
    assert check.passed and check.observed.startswith("first held 4.0s after"), check

    never = states.FakeRecorder()
    never.feed(pod("a-0", "a"), 0.0)
    timer = threading.Timer(0.05, never.advance, args=(10.0,))
    timer.start()
    missed = judge.between(never, is_running, 0.0, 0, 3.0, 5.0, "runs 3-5 s after")
    timer.join()
    assert not missed.passed and missed.observed.startswith("not by 5s after step 1")


def test_anchored_expectations_take_their_step_by_number_or_describe_text() -> None:
    describes = ["apply the job", "", "the pods end"]
    exp = models.expectation_from({"pods": {"count": 1}, "between": ["2s", "20s"], "since": "the pods end"}, 30.0, describes)
    assert (exp.mode, exp.since_step, exp.between_s, exp.window_s) == ("between", 2, (2.0, 20.0), 20.0)
    assert exp.label() == 'pods between 2s and 20s after step 3: {"count": 1}'
    never = models.expectation_from({"pods": {"count": 1}, "never_since": 1}, 30.0, describes)
    assert (never.mode, never.since_step) == ("never_since", 0)
    with pytest.raises(ValueError, match="no step 4"):
        models.step_index(4, describes)
    rec = states.FakeRecorder()
    with pytest.raises(ValueError, match="step 3 has not run"):
        judge.expectation(rec, exp, 1.0, step_ends=[0.0])


# --- phase histories ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "passed", "observed"),
    [
        ({"phases": ["Pending", "Succeeded"]}, True, "Pending -> Running -> Succeeded"),
        ({"phases": ["Pending", "Succeeded"], "without": ["Failed"]}, True, "Pending -> Running -> Succeeded"),
        ({"phases": ["Pending", "Succeeded"], "without": ["Running"]}, False, "(was Running)"),
        ({"phases": ["Pending", "Succeeded"], "exactly": True}, False, "Pending -> Running -> Succeeded"),
        ({"phases": ["Pending", "Running", "Succeeded"], "exactly": True}, True, "Pending -> Running -> Succeeded"),
    ],
)
def test_phase_histories_can_forbid_phases_and_be_exact(spec: dict[str, Any], passed: bool, observed: str) -> None:
    rec = states.FakeRecorder()
    rec.feed(pod("a-0", "a"), 1.0)
    running(2.0, rec)
    rec.feed(pod("a-0", "a", phase="Succeeded", node="n0"), 4.0, "MODIFIED")
    exp = models.Expectation(mode="timeline", window_s=0, describe="", timeline_kind="sequence", timeline_spec={"object": {"kind": "Pod", "name": "a-0"}, **spec})
    check = judge.timeline_check(rec, exp)
    assert check.passed is passed and observed in check.observed, check
    if "without" in spec:
        assert "never " + spec["without"][0] in check.expected


def test_an_event_about_any_selected_object_counts() -> None:
    evicted = {"metadata": {"name": "e1", "namespace": "ns"}, "involvedObject": {"kind": "Pod", "name": "open-main-1", "uid": "u-old"}, "reason": "Evict", "message": "Pod is evicted, because of preempt"}
    state = view(
        (POD, pod("open-main-0", "open", phase="Running", node="n0")),
        (POD, pod("open-main-1", "open", phase="Pending")),
        (POD, pod("guarded-main-0", "guarded", phase="Running", node="n0")),
        (states.EVENT, evicted),
    )
    assert predicates.evaluate(pred("event", object={"kind": "Pod", "name_matches": "^open-"}, reason="Evict"), state).holds
    assert not predicates.evaluate(pred("event", object={"kind": "Pod", "name_matches": "^guarded-"}, reason="Evict"), state).holds
    missing = predicates.evaluate(pred("event", object={"kind": "Pod", "name_matches": "^nobody-"}, reason="Evict"), state)
    assert not missing.holds and "does not exist" in missing.observed
