"""How the loader takes the verbs of issue 18 and what it refuses of them, with the file's line and
the path in the document: remembered names, steps named by anchored windows, node steps, `every`,
selections and JSON comparisons."""

from __future__ import annotations

import io

import pytest

from conformance.cluster import resources
from conformance.scenario import loader

HEAD = """id: verbs-case
suite: verbs
title: t
level: MUST
cites: [{source: pkg/x.go}]
"""
FIRST = 6  # the first line after HEAD
KNOWN_KINDS = ", ".join(sorted({k.kind for k in resources.KINDS}))


def load(body: str) -> loader.models.Scenario:
    return loader.load_stream(io.StringIO(HEAD + body), "case.yaml")


def problems(body: str) -> list[str]:
    with pytest.raises(loader.ScenarioError) as err:
        load(body)
    return [str(p) for p in err.value.problems if p.is_error]


def test_every_verb_loads_as_written() -> None:
    sc = load("""cluster:
  nodes: []
steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
    describe: the config map is made
  - remember: {as: cm-uid, field: metadata.uid, object: {kind: ConfigMap, name: c}}
  - remember: {as: pod-nodes, field: spec.nodeName, select: {job: j, node_labels: {rack: a}}}
  - remember: {as: commands, field: metadata.uid, objects: {kind: Command, name_matches: '^j-'}}
  - node: {action: add, name: late, cpu: '4', memory: 8Gi, labels: {rack: a}}
  - node: {action: delete, name: late}
  - wait: {every: {select: {hypernode: s0}, phase: Running, fields: {spec.nodeName: {same_as: pod-nodes}}}}
  - expect:
      object: {object: {kind: ConfigMap, labels: {a: b}}, fields: {data.x: {json: {k: [1]}}}}
      never_since: the config map is made
expect:
  - every: {objects: {kind: Service, job: j}, min: 2, fields: {spec.clusterIP: None, metadata.uid: {differs_from: cm-uid}}}
    between: [1s, 5s]
    since: 5
  - object: {object: {kind: Pod, name: p}, fields: {x: {json_contains: {a: 1}}}}
    never_since: 1
  - sequence: {object: {kind: Job, name: j}, phases: [Running, Completed], without: [Completing], exactly: true}
""")
    assert sc.nodes == ()
    assert [s.action for s in sc.steps] == ["apply", "remember", "remember", "remember", "node", "node", "wait", "expect"]
    assert sc.steps[7].expectation is not None and (sc.steps[7].expectation.mode, sc.steps[7].expectation.since_step) == ("never_since", 0)
    assert (sc.expect[0].mode, sc.expect[0].since_step, sc.expect[0].between_s) == ("between", 4, (1.0, 5.0))


def test_a_comparison_needs_a_name_remembered_before_it() -> None:
    found = problems("""steps:
  - wait: {object: {object: {kind: Pod, name: p}, fields: {metadata.uid: {same_as: uids}}}}
  - remember: {as: uids, field: metadata.uid, select: {job: j}}
  - remember: {as: uids, field: spec.nodeName, select: {job: j}}
expect:
  - object: {object: {kind: Pod, name: p}, fields: {metadata.uid: {differs_from: uid}}}
""")
    assert found == [
        f"case.yaml:{FIRST + 1}: steps[0].wait.object.fields.metadata.uid.same_as: expected a name an earlier `remember` step gives (none), got 'uids' (step 2 remembers it, but only after this check)",
        f"case.yaml:{FIRST + 3}: steps[2].remember.as: the name 'uids' is remembered by step 2 already; give each value its own name",
        f"case.yaml:{FIRST + 5}: expect[0].object.fields.metadata.uid.differs_from: expected a name an earlier `remember` step gives ('uids'), got 'uid'; did you mean uids?",
    ]


def test_anchored_windows_name_a_step_that_has_ended() -> None:
    found = problems("""steps:
  - wait: {pods: {count: 0}}
    describe: nothing runs
  - expect: {pods: {count: 0}, never_since: 2}
  - expect: {pods: {count: 0}, between: [1s, 2s], since: nothing run}
expect:
  - {pods: {count: 0}, never_since: 9}
  - {pods: {count: 0}, between: [5s, 2s], since: 1}
  - {pods: {count: 0}, between: [1s, 2s]}
""")
    assert found == [
        f"case.yaml:{FIRST + 8}: expect[2].between: between needs since beside it",
        f"case.yaml:{FIRST + 3}: steps[1].expect.never_since: names step 2, which does not come before this expect step (step 2); an expectation can only be anchored at a step that has ended",
        f"case.yaml:{FIRST + 4}: steps[2].expect.since: expected a step's number (1 to 3) or its describe text, got \"nothing run\": 0 steps are described 'nothing run'; name exactly one, or give its number; did you mean nothing runs?",
        f"case.yaml:{FIRST + 6}: expect[0].never_since: expected a step's number (1 to 3) or its describe text, got 9: there is no step 9 (the scenario has 3)",
        f"case.yaml:{FIRST + 7}: expect[1].between: expected [FROM, TO] with FROM before TO, got [\"5s\", \"2s\"]",
    ]


def test_node_steps_name_the_nodes_the_scenario_has() -> None:
    found = problems("""cluster:
  nodes: [{count: 2, prefix: n}]
steps:
  - node: {action: cordon, name: n-2}
  - node: {action: add, name: n-1, cpu: '2'}
  - node: {action: add, name: extra}
  - node: {action: delete, name: extra}
  - node: {action: taint, name: extra, taint: {key: k, effect: NoSchedule}}
  - node: {action: add, name: extra, cpu: many}
  - node: {action: untaint, name: n-0}
  - wait: {pods: {count: 0}}
""")
    assert found == [
        f"case.yaml:{FIRST + 8}: steps[5].node.cpu: expected a Kubernetes quantity such as 8, 500m or 32Gi, got \"many\"",
        f"case.yaml:{FIRST + 3}: steps[0].node.name: expected a node the scenario has here (n-0, n-1), got 'n-2'; did you mean n-1?",
        f"case.yaml:{FIRST + 4}: steps[1].node.name: expected the name of a node the scenario does not have yet, got 'n-1', which it has",
        f"case.yaml:{FIRST + 7}: steps[4].node.name: expected a node the scenario has here (n-0, n-1), got 'extra'",
        f"case.yaml:{FIRST + 9}: steps[6].node: untaint needs `taint: {{key, effect}}` beside it: the taint to remove",
    ]


def test_selections_and_every_are_checked() -> None:
    found = problems("""steps:
  - remember: {as: x, field: metadata.uid, objects: {kind: Comand, name_matches: '(unclosed'}}
  - wait:
      every: {objects: {kind: Service}, phase: Running, fields: {spec.type: ClusterIP}}
  - wait:
      object: {object: {kind: Pod, name: p, labels: {a: b}}}
expect:
  - pods: {select: {name_matches: '[bad', node_labels: {}}, count: 1}
  - every: {select: {job: j}, fields: {a: {json: 1, matches: x}}}
""")
    assert found == [
        f"case.yaml:{FIRST + 7}: expect[0].pods.select.node_labels: must not be empty (got {{}})",
        f"case.yaml:{FIRST + 8}: expect[1].every.fields.a: expected exactly one of: matches, exists, contains, json, json_contains, same_as, differs_from, absent_or, past_boundary (got: json, matches)",
        f"case.yaml:{FIRST + 5}: steps[2].wait.object.object: expected exactly one of: name, job, name_matches, labels (got: kind, labels, name)",
        f"case.yaml:{FIRST + 1}: steps[0].remember.objects.kind: expected a kind the kit knows ({KNOWN_KINDS}), got \"Comand\"; did you mean Command?",
        f"case.yaml:{FIRST + 1}: steps[0].remember.objects.name_matches: expected a regular expression, got \"(unclosed\": missing ), unterminated subpattern at position 0",
        f"case.yaml:{FIRST + 3}: steps[1].wait.every.phase: phase filters pods (with `select`); for \"Service\" objects check a field instead (status.phase, spec.nodeName)",
        f"case.yaml:{FIRST + 7}: expect[0].pods.select.name_matches: expected a regular expression, got \"[bad\": unterminated character set at position 0",
    ]


def test_refused_within_loads_and_needs_a_refusal_to_wait_for() -> None:
    sc = load("""steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
    expect_rejection: 'is not allowed'
    refused_within: 10s
""")
    assert (sc.steps[0].expect_rejection, sc.steps[0].refused_within_s) == ("is not allowed", 10.0)
    found = problems("""steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
    refused_within: 10s
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: d}}
    expect_rejection: 'no'
    refused_within: 0s
""")
    assert f"case.yaml:{FIRST + 2}: steps[0].refused_within: refused_within needs expect_rejection (the message the API's refusal must match)" in found
    assert f"case.yaml:{FIRST + 5}: steps[1].refused_within: expected a window longer than 0s, got \"0s\"" in found


def test_the_verbs_of_issue_31_load_and_what_the_loader_refuses_of_them() -> None:
    """`since: {time_of}`, `never_after`, `endpoints` and `past_boundary` load as written; a
    boundary check that any time passes, a phase the kind never has, an `endpoints` without its
    Service and a `time_of` naming an unknown kind are refused, at their line."""
    sc = load("""steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
expect:
  - endpoints: {service: s, pods: {job: j}, ports: {gcs: 6379}, ready: true}
    within: 5s
  - event: {object: {kind: PodGroup, job: j}, reason: Evict}
    between: [15s, 35s]
    since: {time_of: {objects: {kind: Pod, job: j}, field: 'status.conditions[type=PodScheduled].lastTransitionTime'}}
  - sequence: {object: {kind: Job, name: j}, phases: [Completed], never_after: [Running]}
  - object: {object: {kind: Job, name: j}, fields: {metadata.creationTimestamp: {past_boundary: {every: 1m, at_most: 10s}}}}
    within: 5s
""")
    assert [e.predicate.kind if e.predicate else e.timeline_kind for e in sc.expect] == ["endpoints", "event", "sequence", "object"]
    assert sc.expect[1].since_time is not None and sc.expect[1].since_step is None
    found = problems("""steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
expect:
  - object: {object: {kind: Job, name: j}, fields: {metadata.creationTimestamp: {past_boundary: {every: 1m, at_most: 60s}}}}
    within: 5s
  - sequence: {object: {kind: Job, name: j}, phases: [Completed], never_after: [Runing]}
  - endpoints: {pods: {job: j}}
    within: 5s
  - event: {object: {kind: PodGroup, job: j}, reason: Evict}
    between: [15s, 35s]
    since: {time_of: {object: {kind: Podd, name: p}, field: metadata.creationTimestamp}}
""")
    assert any("case.yaml:9" in p and "at_most below every" in p for p in found), found
    assert any("case.yaml:11" in p and "never_after" in p and "Runing" in p for p in found), found
    assert any("case.yaml:12" in p and "service" in p for p in found), found
    assert any("case.yaml:16" in p and "Podd" in p for p in found), found
