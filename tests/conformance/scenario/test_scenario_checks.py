"""What the loader refuses beyond the schema's shapes (issue 15): typos that used to pass `vck validate`
and were then judged at run time, blamed on the implementation, silently not claimed, or an error.
Every problem names the file, the line, the path in the document and what was expected."""

from __future__ import annotations

import io
import os
import pathlib
import resource
import subprocess
import sys
import time

import pytest

from conformance import api
from conformance.cluster import nodes
from conformance.observe import summaries
from conformance.scenario import loader, phases

HEAD = """id: checks-case
suite: checks
title: t
level: MUST
cites: [{source: pkg/x.go}]
"""
# The first line after HEAD.
FIRST = 6


def load(body: str) -> loader.models.Scenario:
    return loader.load_stream(io.StringIO(HEAD + body), "case.yaml")


def problems(body: str) -> list[loader.Problem]:
    with pytest.raises(loader.ScenarioError) as err:
        load(body)
    return list(err.value.problems)


def only(body: str) -> loader.Problem:
    found = problems(body)
    assert len(found) == 1, [str(p) for p in found]
    return found[0]


# --- 1. phases ----------------------------------------------------------------------------------------
def test_a_job_phase_that_does_not_exist_says_the_closest_one() -> None:
    problem = only("steps:\n  - wait: {phase: {object: {kind: Job, name: j}, is: Runing}}\n")
    assert (problem.line, problem.path) == (FIRST + 1, "steps[0].wait.phase.is")
    assert 'got "Runing"; did you mean Running?' in problem.message
    assert "Pending, Aborting, Aborted, Running, Restarting, Completing, Completed, Terminating, Terminated, Failed" in problem.message
    assert str(problem).startswith(f"case.yaml:{FIRST + 1}: steps[0].wait.phase.is: expected a phase of a Volcano Job")


def test_phases_are_those_of_the_object_kind() -> None:
    found = problems("""steps:
  - wait: {pods: {count: 0}}
expect:
  - phase: {object: {kind: PodGroup, job: j}, in: [Inqueue, Open]}
  - sequence: {object: {kind: Queue, name: q}, phases: [Open, Closd]}
  - order:
      first: {phase: {object: {kind: Pod, name: p}, is: Completed}}
      then: {pods: {count: 1}}
""")
    assert [(p.line, p.path) for p in found] == [
        (FIRST + 3, "expect[0].phase.in[1]"),
        (FIRST + 4, "expect[1].sequence.phases[1]"),
        (FIRST + 6, "expect[2].order.first.phase.is"),
    ]
    assert "a phase of a PodGroup (Pending, Running, Unknown, Inqueue, Completed), got \"Open\"" in found[0].message
    assert "did you mean Closed?" in found[1].message
    assert "a phase of a Pod (Pending, Running, Succeeded, Failed, Unknown), got \"Completed\"" in found[2].message


def test_a_kind_without_a_phase_is_refused() -> None:
    problem = only("steps:\n  - wait: {phase: {object: {kind: ConfigMap, name: c}, is: Running}}\n")
    assert problem.path == "steps[0].wait.phase.object.kind"
    assert "expected a kind with a phase (Job, JobFlow, Namespace, Pod, PodGroup, Queue), got ConfigMap" in problem.message


def test_a_pod_phase_typo_says_the_closest_one() -> None:
    problem = only("steps:\n  - wait: {pods: {count: 1, phase: running}}\n")
    assert problem.path == "steps[0].wait.pods.phase" and "did you mean Running?" in problem.message


@pytest.mark.parametrize(("api_version", "kind"), sorted(phases.PHASES))
def test_the_phases_are_where_the_kit_reads_them(api_version: str, kind: str) -> None:
    for phase in phases.of(api_version, kind):
        status = {"state": {"phase": phase}} if kind in ("Job", "JobFlow") else {"state": phase} if kind == "Queue" else {"phase": phase}
        assert summaries.phase_of(kind, {"apiVersion": api_version, "kind": kind, "status": status}) == phase


# --- 2. regular expressions -------------------------------------------------------------------------
def test_every_regular_expression_is_compiled_at_load() -> None:
    found = problems("""steps:
  - apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
    expect_rejection: "denied [a-"
  - wait: {event: {reason: Evict, message: "*evicted"}}
  - expect: {object: {object: {kind: Pod, name: p}, fields: {metadata.name: {matches: "p(?P<x"}}}}
""")
    assert [(p.line, p.path) for p in found] == [
        (FIRST + 2, "steps[0].expect_rejection"),
        (FIRST + 3, "steps[1].wait.event.message"),
        (FIRST + 4, 'steps[2].expect.object.fields.metadata.name.matches'),
    ]
    assert found[0].message.startswith('expected a regular expression, got "denied [a-": unterminated character set at position 7')
    assert "nothing to repeat at position 0" in found[1].message


# --- 3. windows -------------------------------------------------------------------------------------
def test_every_window_is_longer_than_nothing() -> None:
    found = problems("""timeouts: {default_within: 0ms}
steps:
  - wait: {pods: {count: 1}}
    within: 0.0s
  - expect: {pods: {count: 1}, throughout: 0m}
expect:
  - pods: {count: 1}
    within: 0h
  - pods: {count: 1}
    within: 0.5s
""")
    assert [(p.line, p.path) for p in found] == [
        (FIRST, "timeouts.default_within"),
        (FIRST + 3, "steps[0].within"),
        (FIRST + 4, "steps[1].expect.throughout"),
        (FIRST + 7, "expect[0].within"),
    ]
    assert all(p.message.startswith("expected a window longer than 0s, got") for p in found)
    assert 'got "0.0s"' in found[1].message


def test_a_negative_window_is_not_a_duration() -> None:
    problem = only("steps:\n  - wait: {pods: {count: 1}}\n    within: -5s\n")
    assert problem.path == "steps[0].within" and "expected a duration such as 30s" in problem.message


# --- 4. kinds ---------------------------------------------------------------------------------------
def test_every_kind_the_kit_must_handle_is_one_it_knows() -> None:
    found = problems("""setup:
  - {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queu, metadata: {name: q}}
steps:
  - apply: {apiVersion: batch.volcano.sh/v1, kind: Job, metadata: {name: j}}
  - patch: {object: {kind: podgroup, job: j}, patch: {}}
  - delete: {kind: Pod, apiVersion: v2, name: p}
  - wait: {condition: {object: {kind: Nodes, name: n}, type: Ready}}
  - expect: {event: {object: {kind: ConfigMap, name: c}, reason: R}}
expect:
  - sequence: {object: {kind: Jbo, name: j}, phases: [Running]}
""")
    assert [(p.line, p.path) for p in found] == [
        (FIRST + 1, "setup[0].kind"),
        (FIRST + 3, "steps[0].apply.apiVersion"),
        (FIRST + 4, "steps[1].patch.object.kind"),
        (FIRST + 5, "steps[2].delete.apiVersion"),
        (FIRST + 6, "steps[3].wait.condition.object.kind"),
        (FIRST + 9, "expect[0].sequence.object.kind"),
    ]
    assert found[0].message.startswith("expected a kind the kit knows (Command, ConfigMap, ")
    assert found[0].message.endswith('got "Queu"; did you mean Queue?')
    assert found[1].message == 'expected an apiVersion the kit knows for Job (batch.volcano.sh/v1alpha1, batch/v1), got "batch.volcano.sh/v1"; did you mean batch.volcano.sh/v1alpha1?'
    assert "did you mean PodGroup?" in found[2].message
    assert 'expected an apiVersion the kit knows for Pod (v1), got "v2"' in found[3].message
    assert "did you mean Node?" in found[4].message and "did you mean Job?" in found[5].message


def test_a_json_patch_and_its_type_go_together() -> None:
    """A list of operations needs `type: json`, `type: json` needs the list, and a strategic merge
    patch of a Volcano kind is refused before the API server would refuse it."""
    found = problems("""steps:
  - apply: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, metadata: {name: j}}
  - patch: {object: {kind: Job, name: j}, patch: [{op: replace, path: /spec/minAvailable, value: 2}]}
  - patch: {object: {kind: Job, name: j}, type: json, patch: {spec: {minAvailable: 2}}}
  - patch: {object: {kind: Job, name: j}, type: strategic, patch: {spec: {minAvailable: 2}}}
  - patch: {object: {kind: Job, name: j}, type: json, patch: [{op: replace, path: /spec/minAvailable, value: 2}]}
  - patch: {object: {kind: Pod, name: p}, type: strategic, patch: {metadata: {labels: {a: b}}}}
expect:
  - object: {object: {kind: Job, name: j}, fields: {spec.minAvailable: 2}}
""")
    assert [(p.line, p.path) for p in found] == [
        (FIRST + 2, "steps[1].patch.patch"),
        (FIRST + 3, "steps[2].patch.patch"),
        (FIRST + 4, "steps[3].patch.type"),
    ]
    assert "needs `type: json`" in found[0].message and "needs a JSON Patch" in found[1].message
    assert "no strategic merge patch" in found[2].message


def test_an_every_whose_max_is_below_its_min_is_refused() -> None:
    problem = only("""steps:
  - apply: {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, metadata: {name: j}}
expect:
  - every: {objects: {kind: Job}, min: 2, max: 1, fields: {metadata.name: {exists: true}}}
""")
    assert (problem.line, problem.path) == (FIRST + 3, "expect[0].every.max")
    assert "below min 2" in problem.message


def test_a_remembered_selection_names_a_value_an_earlier_step_gives() -> None:
    problem = only("""steps:
  - remember: {as: first, field: metadata.name, objects: {kind: Job}}
  - expect: {pods: {select: {job: {remembered: frist}}, count: 1}}
expect:
  - every: {objects: {kind: Job, name: {remembered: first}}, fields: {metadata.name: {exists: true}}}
""")
    assert problem.path == "steps[1].expect.pods.select.job.remembered" and "did you mean first?" in problem.message


def test_a_remember_narrows_by_phase_only_the_pods_it_selects() -> None:
    problem = only("""steps:
  - remember: {as: x, field: metadata.uid, objects: {kind: Job}, phase: Running}
expect:
  - object: {object: {kind: Job, name: j}, fields: {metadata.uid: {same_as: x}}}
""")
    assert problem.path == "steps[0].remember.phase" and "has none" in problem.message


# --- 5. quantities ------------------------------------------------------------------------------------
def test_node_shapes_are_kubernetes_quantities() -> None:
    found = problems("""cluster:
  nodes:
    - {cpu: 4 cores, memory: 16Gi}
    - {cpu: -2, resources: {nvidia.com/gpu: eight, example.com/fpga: 2}}
    - {cpu: 500m, memory: "1.5Gi", resources: {example.com/nic: "100k"}}
steps:
  - wait: {pods: {count: 1}}
""")
    assert [(p.line, p.path) for p in found] == [
        (FIRST + 2, "cluster.nodes[0].cpu"),
        (FIRST + 3, "cluster.nodes[1].cpu"),
        (FIRST + 3, "cluster.nodes[1].resources.nvidia.com/gpu"),
    ]
    assert all(p.message.startswith("expected a Kubernetes quantity such as 8, 500m or 32Gi, got ") for p in found)


def test_the_schema_and_the_node_specs_share_one_quantity_form() -> None:
    assert loader.schema()["$defs"]["quantity"]["oneOf"][0]["pattern"] == nodes.QUANTITY_PATTERN


def test_container_resources_in_applied_manifests_are_quantities() -> None:
    found = problems("""setup:
  - apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec: {containers: [{name: c, resources: {requests: {cpu: 1e3, memory: 2 GB}}}]}
steps:
  - apply:
      apiVersion: batch.volcano.sh/v1alpha1
      kind: Job
      metadata: {name: j}
      spec:
        tasks:
          - template: {spec: {initContainers: [{name: i, resources: {limits: {cpu: "+.5", nvidia.com/gpu: one}}}]}}
  - apply:
      apiVersion: v1
      kind: Pod
      metadata: {name: refused}
      spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}
    expect_rejection: quantities
""")
    assert [(p.line, p.path) for p in found] == [
        (FIRST + 4, "setup[0].spec.containers[0].resources.requests.memory"),
        (FIRST + 12, "steps[0].apply.spec.tasks[0].template.spec.initContainers[0].resources.limits.nvidia.com/gpu"),
    ]
    assert found[0].message == 'expected a Kubernetes quantity such as 8, 500m, 32Gi or 1e3, got "2 GB"'


# --- 6. a scenario judges something --------------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        "steps: [{wait: {pods: {count: 1}}}]\n",
        "steps: [{expect: {pods: {count: 1}}}]\n",
        "steps: [{apply: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}, expect_rejection: denied}]\n",
        "steps: [{measure: {figure: f, fragmented_nodes: {resource: r}, at_most: 1}}]\n",
        "steps: []\nexpect: [{pods: {count: 1}}]\n",
    ],
)
def test_any_judgment_will_do(body: str) -> None:
    load(body)


def test_a_scenario_that_judges_nothing_is_refused() -> None:
    problem = only("steps:\n  - measure: {figure: f, fragmented_nodes: {resource: r}}\n  - pause: 1s\nexpect: []\n")
    assert (problem.line, problem.path) == (FIRST + 3, "expect")
    assert problem.message.startswith("the scenario judges nothing: expected an `expect` entry, a `wait` step, an `expect` step, an `apply`, `patch`, `delete` or `scale` step with `expect_rejection` or a `measure` step with a comparison")


def test_schema_problems_in_the_steps_do_not_also_say_nothing_is_judged() -> None:
    problem = only("steps:\n  - wiat: {pods: {count: 1}}\n")
    assert problem.path == "steps[0]"


# --- 7. capabilities: warnings ----------------------------------------------------------------------
UNKNOWN_CAPABILITIES = """requires: [plugin:gnag, device:gpu, jobplugn:ray]
scheduler:
  actions: "enqueue, alocate"
  tiers:
    - plugins: [{name: gang}, {name: binpak}]
steps:
  - wait: {pods: {count: 1}}
  - scheduler: {actions: allocate, tiers: [{plugins: [{name: drff}]}]}
"""


def test_an_unknown_capability_is_a_warning_naming_the_closest_known_one() -> None:
    scenario, warnings = loader.read_stream(io.StringIO(HEAD + UNKNOWN_CAPABILITIES), "case.yaml")
    assert "plugin:gnag" in scenario.requires
    assert [(w.line, w.path, w.severity) for w in warnings] == [
        (FIRST, "requires[0]", loader.WARNING),
        (FIRST, "requires[2]", loader.WARNING),
        (FIRST + 2, "scheduler.actions", loader.WARNING),
        (FIRST + 4, "scheduler.tiers[0].plugins[1].name", loader.WARNING),
        (FIRST + 7, "steps[1].scheduler.tiers[0].plugins[0].name", loader.WARNING),
    ]
    assert warnings[0].message.startswith('expected a capability the kit knows, got "plugin:gnag"; did you mean plugin:gang?')
    assert "did you mean jobplugin:ray?" in warnings[1].message
    assert 'expected scheduler actions the kit knows, got "alocate"; did you mean allocate?' in warnings[2].message
    assert "did you mean binpack?" in warnings[3].message and "did you mean drf?" in warnings[4].message
    assert str(warnings[0]).startswith(f"case.yaml:{FIRST}: warning: requires[0]: ")


def test_the_known_capabilities_are_those_the_kit_ships_claims_for() -> None:
    from conformance.scenario import capabilities

    known = capabilities.known()
    assert {"plugin:gang", "jobplugin:ray", "device:gpu", "admission:job"} <= known  # the reference's
    assert {"plugin:deviceshare", "plugin:tdm"} <= known  # Volcano's, which the reference lacks
    # reference_scheduler's file is read as data: conformance never imports that package.
    code = "import sys; from conformance.scenario import capabilities; capabilities.known(); print('reference_scheduler' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


def test_vck_validate_shows_warnings_and_still_passes(tmp_path: pathlib.Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_text(HEAD + UNKNOWN_CAPABILITIES)
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(case)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok:")
    assert f"{case}:{FIRST}: warning: requires[0]: expected a capability the kit knows, got \"plugin:gnag\"; did you mean plugin:gang?" in proc.stderr
    assert proc.stderr.strip().endswith("5 warnings in 1 file")


def test_warnings_come_with_the_errors(tmp_path: pathlib.Path) -> None:
    case = tmp_path / "case.yaml"
    case.write_text(HEAD.replace("level: MUST", "level: MAY") + "requires: [plugin:gnag]\nsteps: [{wait: {pods: {count: 1}}}]\n")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(case)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "level: expected one of MUST, SHOULD" in proc.stderr and "warning: requires[0]" in proc.stderr
    assert proc.stderr.strip().endswith("1 problem in 1 file, 1 warning")


# --- 8. the suite is the folder -----------------------------------------------------------------------
def _scenario_at(path: pathlib.Path, text: str) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_suite_is_reported_with_the_other_problems(tmp_path: pathlib.Path) -> None:
    case = _scenario_at(tmp_path / "scenarios" / "gang" / "case.yaml", HEAD.replace("level: MUST", "level: MAY") + "steps: [{wait: {pods: {count: 1}}}]\n")
    with pytest.raises(loader.ScenarioError) as err:
        loader.load_file(case)
    assert [(p.line, p.path) for p in err.value.problems] == [(4, "level"), (2, "suite")]
    assert err.value.problems[1].message == "the suite is 'checks' but the file is in the folder of suite 'gang'; make them equal"


def test_a_scenario_sits_in_the_folder_of_its_suite(tmp_path: pathlib.Path) -> None:
    case = _scenario_at(tmp_path / "scenarios" / "case.yaml", HEAD + "steps: [{wait: {pods: {count: 1}}}]\n")
    with pytest.raises(loader.ScenarioError) as err:
        loader.load_file(case)
    [problem] = err.value.problems
    assert (problem.line, problem.path) == (2, "suite")
    assert problem.message == "the file sits in scenarios/ itself; expected it in scenarios/checks/, the folder of its suite"


def test_outside_a_scenarios_folder_the_suite_is_free(tmp_path: pathlib.Path) -> None:
    case = _scenario_at(tmp_path / "elsewhere" / "case.yaml", HEAD + "steps: [{wait: {pods: {count: 1}}}]\n")
    assert loader.load_file(case).suite == "checks"


# --- 9. YAML alias bombs ------------------------------------------------------------------------------
def _limit_memory() -> None:
    """A child that balloons hits this ceiling (MemoryError) instead of the machine's."""
    resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))


def test_an_alias_bomb_is_refused_at_once(tmp_path: pathlib.Path) -> None:
    # Nine levels of nine aliases each: 9**9 (387 million) strings once expanded, from 500 bytes.
    laughs = ['  a0: &a0 "lol"'] + [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    bomb = _scenario_at(tmp_path / "bomb.yaml", HEAD + "steps: [{wait: {pods: {count: 1}}}]\nlaughs:\n" + "\n".join(laughs) + "\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(bomb)], capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory)
    assert time.monotonic() - started < 30
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    [line, summary] = proc.stderr.strip().splitlines()
    # a5 expands to 66430 nodes, a6 (line FIRST + 8) to 597871: the first past the limit.
    assert line.startswith(f"{bomb}:{FIRST + 8}: YAML aliases expand the document past 100000 nodes here"), line
    assert "alias bomb" in line and summary == "1 problem in 1 file"


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    problem = only("steps: [{wait: {pods: {count: 1}}}]\nloop: &loop [1, *loop]\n")
    assert problem.line == FIRST + 1
    assert problem.message.startswith("a YAML alias refers to a node that contains it")


def test_a_file_too_large_to_be_a_scenario_is_refused_before_parsing() -> None:
    problem = only("steps: [{wait: {pods: {count: 1}}}]\ndescription: " + "x" * 600_000 + "\n")
    assert (problem.line, problem.path) == (0, "")
    assert problem.message == f"the file is larger than {loader.MAX_BYTES // 1024} KiB, too large for a scenario; refused before parsing"


# --- 10. `vck list | head` ------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["list", str(api.DEFAULT_SCENARIOS / "gang")], ["validate", str(api.DEFAULT_SCENARIOS / "gang")], ["toolchain", "list"]])
def test_output_into_a_closed_pipe_ends_quietly(command: list[str]) -> None:
    """As under `vck list | head -1`: the reader is gone before the output is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "conformance.cli", *command], stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 1
