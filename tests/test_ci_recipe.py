"""The CI recipe (ci/certify-on-kind.sh and the workflow of docs/ci.md): what the script asks of
`vck`, what it keeps, the exit status it passes on, and a workflow whose shards the merge job
finds. The script certifying a real Volcano on kind is tests/conformance/cluster/test_kind.py's
(it needs Docker)."""

from __future__ import annotations

import fnmatch
import os
import pathlib
import shlex
import subprocess

import yaml

from conformance import shards
from tests import suite_runs

SCRIPT = suite_runs.REPO / "ci" / "certify-on-kind.sh"
WORKFLOW = suite_runs.REPO / "ci" / "github-actions.yaml"

# Stands in for `vck`: records each call, then exits as told for `run` and `kind`.
STAND_IN = """#!/bin/sh
printf '%s\\n' "$*" >> "$VCK_CALLS"
case "$1" in
  kind) echo "kind: node image here"; exit "${KIND_STATUS:-0}" ;;
  run) echo "NOT CERTIFIED: volcano-helm on kind"; exit "${RUN_STATUS:-0}" ;;
esac
"""


def run_script(tmp_path: pathlib.Path, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    stand_in = tmp_path / "vck"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    calls = tmp_path / "calls"
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("VCK_", "VOLCANO_"))}
    proc = subprocess.run(
        ["bash", str(SCRIPT)], cwd=tmp_path, env={**environ, "VCK": str(stand_in), "VCK_CALLS": str(calls), **env}, capture_output=True, text=True, timeout=60
    )
    return proc, calls.read_text().splitlines() if calls.exists() else []


def test_the_script_runs_one_shard_of_the_build_on_kind_and_passes_its_verdict_on(tmp_path: pathlib.Path) -> None:
    proc, calls = run_script(
        tmp_path, VOLCANO_IMAGES="volcanosh", VOLCANO_TAG="ci-1", VOLCANO_CHART="installer/helm/chart/volcano", VCK_SHARD="2/4", VCK_SUITES="gang,queue", RUN_STATUS="1"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert calls[0] == "kind image"
    assert shlex.split(calls[1]) == [
        "run", "--backend", "kind", "--impl", "volcano-helm:chart=installer/helm/chart/volcano,images=volcanosh,tag=ci-1",
        "--reports", "reports", "--run-id", "certify-2-of-4", "--suite", "gang,queue", "--shard", "2/4",
    ]  # fmt: skip
    console = (tmp_path / "reports" / "certify-2-of-4.console.log").read_text()
    assert "NOT CERTIFIED: volcano-helm on kind" in console and "certify-on-kind: exit 1" in console


def test_the_script_defaults_to_the_release_the_kit_pins_and_its_images_built_here(tmp_path: pathlib.Path) -> None:
    proc, calls = run_script(tmp_path, VCK_REPORTS=str(tmp_path / "out"), VCK_EXTRA_ARGS="--kind-workers 1 -v")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert shlex.split(calls[1]) == ["run", "--backend", "kind", "--impl", "volcano-helm", "--reports", str(tmp_path / "out"), "--run-id", "certify", "--kind-workers", "1", "-v"]


def test_without_a_node_image_the_script_stops_before_running_with_exit_2(tmp_path: pathlib.Path) -> None:
    proc, calls = run_script(tmp_path, KIND_STATUS="1")
    assert proc.returncode == 2 and calls == ["kind image"], proc.stdout
    assert "no kind node image" in proc.stdout
    # Interrupted while the image is made: the interruption's status, as vck's own.
    again = tmp_path / "again"
    again.mkdir()
    proc, _ = run_script(again, KIND_STATUS="130")
    assert proc.returncode == 130 and "no kind node image" not in proc.stdout, proc.stdout


def test_the_workflow_runs_the_script_per_shard_and_merges_every_shard() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    jobs = workflow["jobs"]
    matrix = jobs["certify"]["strategy"]["matrix"]["shard"]
    parsed = [shards.parse(text) for text in matrix]
    assert sorted(s.index for s in parsed) == list(range(1, len(parsed) + 1)) and {s.count for s in parsed} == {len(parsed)}, matrix
    step = next(s for s in jobs["certify"]["steps"] if "certify-on-kind.sh" in s.get("run", ""))
    assert step["env"]["VCK_SHARD"] == "${{ matrix.shard }}"
    # Every variable the step sets is one the script documents and reads.
    script = SCRIPT.read_text()
    header, body = script.split("set -euo pipefail")
    assert all(f"#   {name} " in header and name in body for name in step["env"]), step["env"]
    merge = next(s["run"] for s in jobs["report"]["steps"] if "vck report merge" in s.get("run", ""))
    pattern = next(word for word in merge.split() if word.startswith("shards/"))
    run_ids = [f"certify-{s.index}-of-{s.count}" for s in parsed]
    assert all(fnmatch.fnmatch(f"shards/{run_id}", pattern) for run_id in run_ids), (pattern, run_ids)
    assert jobs["report"]["if"] == "always()", "the merge runs when a shard fails, so the report says which"
