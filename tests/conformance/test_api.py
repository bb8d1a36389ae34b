"""`conformance.api` as a library, the way the CLI uses it: a run loads the scenario files once,
hands them to pytest in-process and takes the results back the same way (no report read back
from disk), from any folder of scenarios; the other operations answer with objects, not output."""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from conformance import api, scaffold
from conformance.api import bridge
from conformance.report import diff
from tests import suite_runs

# Runs in a child process (a run installs signal handlers and runs pytest.main): every file read
# of the loader is counted, and reading a report back would fail.
RUN_IN_PROCESS = """
import json, pathlib, sys
from conformance import api
from conformance.report import json_report
from conformance.scenario import loader

reads = []
real_read = loader.read_file
def counting(path):
    reads.append(pathlib.Path(path).name)
    return real_read(path)
loader.read_file = counting
def no_read_back(path):
    raise AssertionError(f"the run read {path} back")
json_report.read = no_read_back

config = api.RunConfig(scenarios=[pathlib.Path(sys.argv[1])], jobs=1, reports=pathlib.Path(sys.argv[2]), run_id="run")
assert not config.validate(), config.validate()
outcome = api.run(config, progress=lambda _: None)
print(json.dumps({
    "reads": reads, "certified": outcome.certified, "exit": outcome.pytest_exit,
    "verdicts": {s.id: s.status.value for s in outcome.run.scenarios}, "folder": str(outcome.report_dir),
}))
"""


@pytest.mark.cluster
def test_a_run_loads_each_file_once_and_takes_its_results_back_in_process(tmp_path: pathlib.Path) -> None:
    private = tmp_path / "my-suites" / "checks"  # not a folder named `scenarios`
    private.mkdir(parents=True)
    shutil.copy(suite_runs.REPO / "scenarios" / "admission" / "duplicate-task-name.yaml", private / "dup.yaml")
    proc = subprocess.run(
        [sys.executable, "-c", RUN_IN_PROCESS, str(tmp_path / "my-suites"), str(tmp_path / "reports")],
        cwd=suite_runs.REPO, env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")}, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcome = json.loads(proc.stdout.strip().splitlines()[-1])
    assert outcome["reads"] == ["dup.yaml"], "the file is read once, by the run, and pytest collects what it read"
    assert outcome["verdicts"] == {"admission-duplicate-task-name": "passed"} and outcome["certified"] and outcome["exit"] == 0
    assert pathlib.Path(outcome["folder"]) == tmp_path / "reports" / "run" and (tmp_path / "reports" / "run" / "report.json").is_file()


def test_operations_answer_with_objects(tmp_path: pathlib.Path) -> None:
    path = api.new_scenario(api.NewConfig("mine", "first-check", tmp_path / "scenarios"))
    assert path == tmp_path / "scenarios" / "mine" / "first-check.yaml"
    for shape in scaffold.SHAPES:
        made = api.new_scenario(api.NewConfig("mine", f"shape-{shape}", tmp_path / "scenarios", shape))
        assert not [p for p in api.validate_scenarios(api.ValidateConfig([made])) if p.is_error]
    with pytest.raises(scaffold.ScaffoldError, match="shape 'round'"):
        api.new_scenario(api.NewConfig("mine", "odd", tmp_path / "scenarios", "round"))
    problems = api.validate_scenarios(api.ValidateConfig([path, tmp_path / "missing.yaml"]))
    assert [(pathlib.Path(p.file).name, p.message) for p in problems if p.is_error] == [("missing.yaml", "no such file or folder")]
    status = dict((comp.name, hit) for comp, hit in api.toolchain_status())
    assert "kube-apiserver" in status and "kwokctl" in status and "helm" in status
    with pytest.raises(diff.DiffError):
        api.diff_runs(api.DiffConfig("nope-a", "nope-b", tmp_path / "reports"))
    stopped = api.cluster_status(api.ClusterConfig(name="vck-never-started"))
    assert (stopped.name, stopped.backend, stopped.running) == ("vck-never-started", "embedded", False)


def test_a_report_states_the_workload_images_the_run_used(tmp_path: pathlib.Path) -> None:
    """Real workloads ran in these images: the report says which, beside the other versions (the
    kit's carry their recipe's digest in the tag), so two runs' workloads can be compared."""
    api_run = importlib.import_module("conformance.api.run")  # `api.run` is the function

    def stated(images: dict[str, str], run_id: str) -> dict[str, str]:
        config = api.RunConfig(reports=tmp_path)
        config.backend.images = images
        written = api_run.write(config, run_id, bridge.Collected([], time.time(), 1, 0, "", {}))
        versions = json.loads((written.folder / "report.json").read_text())["run"]["versions"]
        return {k: v for k, v in versions.items() if k.startswith("workload image")}

    assert stated({"torch": "registry.example/torch:1", "mpi": "vck-workload-mpi:97e682ef504c"}, "imaged") == {
        "workload image mpi": "vck-workload-mpi:97e682ef504c", "workload image torch": "registry.example/torch:1",
    }
    assert stated({}, "simulated-only") == {}
