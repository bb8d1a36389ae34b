"""`vck run` refuses, before any cluster starts, what it could only get wrong: invalid scenario
files, an empty folder, an unknown broken-build name, a -k that selects nothing. Each refusal is one
clear line on stderr and exit status 2; none of these tests starts a cluster."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests import suite_runs

BROKEN = suite_runs.REPO / "tests" / "data" / "broken_scenarios"


def vck(tmp_path: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    temp = tmp_path / "system-temp"
    temp.mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli", *args],
        cwd=suite_runs.REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        # Should a refusal fail to happen, no cluster may start either.
        env={**os.environ, "VCK_STATE_DIR": str(tmp_path / "state"), "VCK_NO_CLUSTERS": "1", "TMPDIR": str(temp)},
    )
    # A refused run leaves nothing in the system's temporary folder (once a vck-reference-* folder).
    assert not list(temp.iterdir()), list(temp.iterdir())
    return proc


def test_invalid_scenario_files_refuse_the_run_and_are_each_named(tmp_path: pathlib.Path) -> None:
    tree = tmp_path / "scenarios" / "gang"
    tree.mkdir(parents=True)
    shutil.copy(suite_runs.REPO / "scenarios" / "gang" / "no-partial-gang.yaml", tree)
    bad = sorted(p for p in BROKEN.glob("*.yaml") if p.name.startswith(("bad-", "unknown-")))
    for path in bad:
        shutil.copy(path, tree / path.name)
    proc = vck(tmp_path, "run", str(tmp_path / "scenarios"), "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    for path in bad:
        assert f"{path.name}:" in proc.stderr, (path.name, proc.stderr)
    assert "CERTIFIED" not in proc.stdout and not (tmp_path / "reports").exists()


def test_an_empty_folder_is_refused(tmp_path: pathlib.Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = vck(tmp_path, "run", str(empty), "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2
    assert f"no scenario under {empty}" in proc.stderr, proc.stderr


def test_an_unknown_broken_feature_is_refused_with_the_known_ones(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "--impl", "reference:broken=nosuchplugin", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2
    assert "unknown nosuchplugin" in proc.stderr and "gang" in proc.stderr and "policies" in proc.stderr, proc.stderr


@pytest.mark.parametrize("impl", ["reference", "volcano"])
def test_jobs_must_be_auto_or_a_number(tmp_path: pathlib.Path, impl: str) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "--impl", impl, "--jobs", "lots", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2 and "--jobs 'lots'" in proc.stderr, proc.stderr


def test_repeat_and_stress_must_be_counts(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "--repeat", "0", "--stress", "-1", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2
    assert "--repeat 0: must be at least 1" in proc.stderr and "--stress -1: must be 0 or more" in proc.stderr, proc.stderr


def test_a_selection_that_matches_nothing_says_so(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "-k", "no-such-scenario", "--jobs", "1", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2
    assert "no scenario matches -k 'no-such-scenario'" in proc.stderr, proc.stderr


def test_reports_that_cannot_be_written_are_refused_before_the_run(tmp_path: pathlib.Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    proc = vck(tmp_path, "run", "--suite", "gang", "--reports", str(blocker / "reports"))
    assert proc.returncode == 2
    assert f"--reports {blocker / 'reports'} is not writable" in proc.stderr, proc.stderr


KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {{server: "https://127.0.0.1:{port}", insecure-skip-tls-verify: true}}
users:
- name: someone
  user: {{token: abc}}
contexts:
- name: here
  context: {{cluster: nowhere, user: someone}}
current-context: here
"""


def existing(tmp_path: pathlib.Path, *args: str, kubeconfig_env: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env.update({"HOME": str(tmp_path / "home"), "VCK_STATE_DIR": str(tmp_path / "state"), "VCK_NO_CLUSTERS": "1"})
    if kubeconfig_env is not None:
        env["KUBECONFIG"] = kubeconfig_env
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "run", "--suite", "gang", "--reports", str(tmp_path / "reports"), *args],
        cwd=suite_runs.REPO, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env,
    )


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    """A refusal is one line on stderr (no traceback, no per-scenario failures) and exit 2."""
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_existing_backend_without_a_kubeconfig(tmp_path: pathlib.Path) -> None:
    line = one_line(existing(tmp_path, "--backend", "existing"))
    assert "kubeconfig" in line and "does not exist" in line and "--kubeconfig PATH" in line


def test_existing_backend_with_a_missing_file(tmp_path: pathlib.Path) -> None:
    line = one_line(existing(tmp_path, "--backend", "existing", "--kubeconfig", str(tmp_path / "nope.yaml")))
    assert f"kubeconfig {tmp_path / 'nope.yaml'}" in line and "does not exist" in line


def test_existing_backend_with_bad_yaml(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("clusters: [unclosed\n")
    line = one_line(existing(tmp_path, "--backend", "existing", "--kubeconfig", str(bad)))
    assert "cannot be read as YAML" in line


def test_existing_backend_with_an_unknown_context(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(KUBECONFIG.format(port=1))
    line = one_line(existing(tmp_path, "--backend", "existing", "--kubeconfig", str(config), "--context", "elsewhere"))
    assert "context 'elsewhere' is not in" in line and "here" in line


def test_existing_backend_whose_server_does_not_answer(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(KUBECONFIG.format(port=1))  # nothing listens on port 1: refused at once
    line = one_line(existing(tmp_path, "--backend", "existing", "--kubeconfig", str(config)))
    assert "https://127.0.0.1:1" in line and "does not answer" in line


def test_a_kubeconfig_without_a_backend_means_the_existing_backend(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(KUBECONFIG.format(port=1))
    proc = existing(tmp_path, "--kubeconfig", str(config))
    assert proc.returncode == 2
    assert "--kubeconfig given without --backend: using the existing backend" in proc.stderr
    assert "https://127.0.0.1:1" in proc.stderr and "does not answer" in proc.stderr


def test_collect_only_lists_what_the_run_would_run(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "-k", "seed003", "--collect-only")
    assert proc.returncode == 0, proc.stderr
    listed = [line.rsplit("::", 1)[1] for line in proc.stdout.splitlines() if "::" in line]
    assert listed == ["gang-seed003-min-available-20-does-not-schedule", "gang-seed003-min-available-4-schedules"]
    assert not (tmp_path / "state").exists()


def test_a_keyword_that_is_not_an_expression_is_refused(tmp_path: pathlib.Path) -> None:
    proc = vck(tmp_path, "run", "--suite", "gang", "-k", "gang and (", "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2 and "-k 'gang and (' is not a valid expression" in proc.stderr, proc.stderr


def test_keywords_are_judged_as_pytest_judges_them() -> None:
    """Before the toolchain or a cluster is touched: names of the scenario, its file and its
    suite folder, substrings, case-insensitive, with and/or/not."""
    from conformance import api

    def problems(keyword: str) -> list[str]:
        return api.keyword_problems(api.RunConfig(suites=["gang"], keyword=keyword))

    assert problems("no-partial-gang") == []
    assert problems("NO-PARTIAL and not full-occupancy") == []
    assert problems("gang and not gang") == ["no scenario matches -k 'gang and not gang'"]
    assert problems("preempt") == ["no scenario matches -k 'preempt'"]
