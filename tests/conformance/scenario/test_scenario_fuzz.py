"""The loader under fuzzing: whatever the input, it answers with a scenario or a ScenarioError whose
every problem has a message and a line, never another exception."""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import api
from conformance.scenario import loader

VALID = yaml.safe_load((api.DEFAULT_SCENARIOS / "gang" / "no-partial-gang.yaml").read_text())
# A scenario touching every semantic check (phases, regexes, windows, kinds, quantities, capabilities).
RICH = yaml.safe_load("""
id: rich
suite: fuzz
title: t
level: MUST
cites: [{source: pkg/x.go}]
requires: [plugin:gang]
timeouts: {default_within: 20s}
scheduler: {actions: "enqueue, allocate", tiers: [{plugins: [{name: gang}, {name: priority}]}]}
setup:
  - {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: q}}
steps:
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {name: j}
      spec: {tasks: [{replicas: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}}}]}
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
    expect_rejection: "denied.*"
  - wait: {phase: {object: {kind: Job, name: j}, in: [Running, Pending]}}
    within: 10s
  - patch: {object: {kind: Queue, name: q}, patch: {spec: {weight: 2}}}
  - expect: {condition: {object: {kind: PodGroup, job: j}, type: Scheduled, message: "ok|fine"}, never: 2s}
  - scheduler: {actions: allocate, tiers: [{plugins: [{name: drf}]}]}
  - delete: {kind: Job, name: j}
expect:
  - sequence: {object: {kind: Queue, name: q}, phases: [Open, Closed]}
  - object: {object: {kind: Pod, name: p}, fields: {metadata.name: {matches: "^p$"}}}
    throughout: 1s
  - order: {first: {phase: {object: {kind: Job, name: j}, is: Running}}, then: {event: {reason: R, message: "x+"}}}
""")
FUZZ = settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _load(text: str | bytes) -> None:
    stream: Any = io.BytesIO(text) if isinstance(text, bytes) else io.StringIO(text)
    try:
        loader.load_stream(stream, "fuzz.yaml")
    except loader.ScenarioError as err:
        assert err.problems
        for problem in err.problems:
            assert problem.message and problem.line >= 0 and problem.file == "fuzz.yaml"


@FUZZ
@given(st.text(max_size=300))
def test_any_text(text: str) -> None:
    _load(text)


@FUZZ
@given(st.binary(max_size=300))
def test_any_bytes(data: bytes) -> None:
    _load(data)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


PATHS = [(VALID, path) for path in _paths(VALID)[1:]] + [(RICH, path) for path in _paths(RICH)[1:]]


def test_the_rich_scenario_loads() -> None:
    loader.load_stream(io.StringIO(yaml.safe_dump(RICH, sort_keys=False)), "rich.yaml")


@FUZZ
@given(st.sampled_from(PATHS), st.sampled_from(["delete", "replace", "insert", "wrap"]), json_values)
def test_mutated_valid_scenario(where: tuple[dict[str, Any], tuple[Any, ...]], how: str, value: Any) -> None:
    valid, path = where
    doc = copy.deepcopy(valid)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    key = path[-1]
    if how == "delete":
        del parent[key]
    elif how == "replace":
        parent[key] = value
    elif how == "insert" and isinstance(parent, dict):
        parent[f"x{key}"] = value
    else:
        parent[key] = [parent[key]]
    text = yaml.safe_dump(doc, sort_keys=False)
    try:
        loader.load_stream(io.StringIO(text), "fuzz.yaml")
    except loader.ScenarioError as err:
        for problem in err.problems:
            assert problem.message and problem.line >= 1, str(problem)


@pytest.mark.parametrize("text", ["{{}}", "{[1]: x}", "? [a, b]\n: c\n", "id: x\n? {k: v}\n: 1\n"])
def test_a_key_that_is_a_mapping_or_a_list_is_refused_as_yaml(text: str) -> None:
    with pytest.raises(loader.ScenarioError, match="not valid YAML"):
        loader.load_stream(io.StringIO(text), "fuzz.yaml")
