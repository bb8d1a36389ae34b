"""An interrupted run is never certified, and leaves nothing behind.

Real signals to a real `vck run` process (in a session of its own, as a CI runner would signal
it): SIGINT (Ctrl-C) and SIGTERM (a CI cancel) at chosen moments (while its cluster starts, while
a scenario runs) and at random ones. Whatever the moment: the exit status is the signal's
(130, 143), a report it wrote says interrupted and not certified, `latest` does not point at it,
and no process or state folder of the run remains.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Sequence

import pytest

from conformance.cluster import processes
from tests import suite_runs

pytestmark = pytest.mark.cluster

# A short scenario, then one that lasts 15 s (its `never` windows): when the first has its
# verdict, the second is surely under way.
SELECTION = ("--suite", "gang", "-k", "full-occupancy or no-partial-gang")
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
EXIT_TIMEOUT_S = 120.0


class Run:
    """`vck run` (or the `command` given) in a session of its own, its output read line by line as
    it comes."""

    def __init__(self, tmp_path: pathlib.Path, *extra: str, command: Sequence[str] | None = None) -> None:
        self.tmp_path = tmp_path
        self.reports = tmp_path / "reports"
        self.state = tmp_path / "state"
        # The system's temporary folder as the run sees it: a run leaves nothing there.
        self.temp = tmp_path / "system-temp"
        self.temp.mkdir(parents=True)
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.cli", *(command or ("run", *SELECTION, "--jobs", "1", "--reports", str(self.reports), "--run-id", "run")), *extra],
            cwd=suite_runs.REPO, env={**os.environ, "VCK_STATE_DIR": str(self.state), "VCK_REFERENCE_WORKDIR": str(tmp_path / "reference"), "TMPDIR": str(self.temp)},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._seen:
                self.lines.append(line)
                self._seen.notify_all()

    def wait_for(self, text: str, timeout_s: float = 300.0) -> None:
        """Until a line of the output contains `text` (the moment to signal at). The deadline only
        bounds a run that never gets there: on a machine loaded far beyond two busy processes
        (a Go build and another test run beside `make test`), two embedded clusters took 37 s to
        start and the first verdict came after 120 s."""
        with self._seen:
            if not self._seen.wait_for(lambda: any(text in line for line in self.lines) or self.proc.poll() is not None, timeout_s):
                raise AssertionError(f"no line with {text!r} within {timeout_s:.0f}s:\n{''.join(self.lines[-30:])}")
        assert self.proc.poll() is None, f"the run ended before {text!r}:\n{''.join(self.lines[-30:])}"

    def signal(self, signum: signal.Signals) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(EXIT_TIMEOUT_S)

    def output(self) -> str:
        with self._seen:
            return "".join(self.lines)


def assert_interrupted_and_clean(run: Run, signum: signal.Signals, code: int) -> None:
    out = run.output()
    report = run.reports / "run" / "report.json"
    if code == 0 or code == 1:
        # The signal came after the run had decided: a whole run, judged as such.
        assert report.exists(), out[-3000:]
    elif code == -signum:
        # Signalled before `vck` installed its handlers (still importing): ended by the signal
        # itself, which a shell reports as the same status; nothing had started.
        assert not report.exists()
    else:
        assert code == STATUS[signum], f"exit {code} after {signum.name}\n{out[-3000:]}"
        assert "CERTIFIED: " not in out.replace("NOT CERTIFIED", ""), out[-3000:]
        if report.exists():
            data = json.loads(report.read_text())
            if data["run"]["interrupted"]:
                assert data["run"]["interrupted"] == signum.name and data["summary"]["certified"] is False, data["run"]
                assert not (run.reports / "latest").exists(), "latest points at an interrupted run"
            else:
                # The signal came while the finished run's report was being written (signals
                # wait until it is whole): a complete report of the whole run.
                assert data["summary"]["not_run"] == 0 and data["run"]["selected"] == len(data["scenarios"]), data["summary"]
    left = processes.under(run.state)
    assert not left, f"processes left behind: {[p.argv[:2] for p in left]}"
    assert not [p for p in run.state.iterdir()] if run.state.exists() else True, f"state left behind: {list(run.state.iterdir())}"
    assert not list(run.temp.iterdir()), f"left in the temporary folder: {list(run.temp.iterdir())}"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_interrupted_during_a_scenario(tmp_path: pathlib.Path, signum: signal.Signals) -> None:
    run = Run(tmp_path)
    run.wait_for("[1/2")  # the first scenario has its verdict; the second is under way
    code = run.signal(signum)
    assert code == STATUS[signum], run.output()[-3000:]
    assert f"INTERRUPTED by {signum.name}: 1 of 2 scenario runs have a verdict" in run.output()
    data = json.loads((run.reports / "run" / "report.json").read_text())
    assert data["summary"]["certified"] is False and data["summary"]["not_run"] == 1
    assert [s["status"] for s in data["scenarios"]] == ["passed"]
    assert_interrupted_and_clean(run, signum, code)


def test_an_interrupted_matrix_runs_no_further_column(tmp_path: pathlib.Path) -> None:
    """A signal ends the whole `vck matrix`, not only the column it came in (each column's run
    takes it as its own interruption and returns)."""
    run = Run(tmp_path, command=("matrix", "reference,reference:broken=gang", *SELECTION, "--jobs", "1", "--reports", str(tmp_path / "reports"), "--matrix-id", "m"))
    run.wait_for("[1/2")
    code = run.signal(signal.SIGINT)
    out = run.output()
    assert code == STATUS[signal.SIGINT], out[-3000:]
    assert "matrix: SIGINT during reference; not run: reference:broken=gang" in out, out[-3000:]
    assert "matrix: reference:broken=gang\n" not in out and not (run.reports / "m" / "reference-broken-gang").exists()
    assert "vck matrix: INTERRUPTED by SIGINT" in out
    written = json.loads((run.reports / "m" / "matrix.json").read_text())
    assert written["interrupted"].startswith("SIGINT during reference") and [c["implementation"] for c in written["columns"]] == ["reference"]
    assert not processes.under(run.state), "processes left behind"


def test_a_parallel_run_interrupted_leaves_nothing(tmp_path: pathlib.Path) -> None:
    """Two workers, each with its own cluster: `vck cluster prune` during the run removes neither
    (their owner, the run, is alive); SIGTERM to the run ends both workers, and the run removes
    what they leave."""
    run = Run(tmp_path, "--jobs", "2")
    run.wait_for("[1/2")
    env = {**os.environ, "VCK_STATE_DIR": str(run.state)}
    listed = subprocess.run([sys.executable, "-m", "conformance.cli", "cluster", "list"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=60)
    assert listed.stdout.count(f" {run.proc.pid} ") == 2, f"both workers' clusters are the run's:\n{listed.stdout}"
    pruned = subprocess.run([sys.executable, "-m", "conformance.cli", "cluster", "prune"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=120)
    assert "removed 0 cluster(s)" in pruned.stdout, pruned.stdout + pruned.stderr
    code = run.signal(signal.SIGTERM)
    assert code == STATUS[signal.SIGTERM], run.output()[-3000:]
    assert_interrupted_and_clean(run, signal.SIGTERM, code)


def test_interrupted_while_the_cluster_starts(tmp_path: pathlib.Path) -> None:
    run = Run(tmp_path)
    run.wait_for("starting etcd, kube-apiserver")
    code = run.signal(signal.SIGTERM)
    assert code == STATUS[signal.SIGTERM], run.output()[-3000:]
    assert_interrupted_and_clean(run, signal.SIGTERM, code)


def test_interrupted_while_the_report_is_written(tmp_path: pathlib.Path) -> None:
    """The signal comes the moment the report folder appears (the writer's first act): it waits
    until the three files are whole, so they agree with each other, whichever way it ends."""
    run = Run(tmp_path)
    run.wait_for("[2/2")  # the last verdict is in: the report is written next
    folder = run.reports / "run"
    while not folder.exists() and run.proc.poll() is None:
        time.sleep(0.001)  # polling the folder's appearance: the moment itself
    code = run.signal(signal.SIGTERM) if run.proc.poll() is None else run.proc.returncode
    assert code in (0, STATUS[signal.SIGTERM]), run.output()[-3000:]
    assert (folder / "report.json").exists(), (code, sorted(str(p) for p in folder.rglob("*")), run.output()[-3000:])
    data = json.loads((folder / "report.json").read_text())
    assert data["summary"]["not_run"] == 0 and len(data["scenarios"]) == 2, data["summary"]
    junit = (folder / "junit.xml").read_text()
    assert junit.count("<testcase") == 2 and junit.rstrip().endswith("</testsuites>"), junit[-500:]
    assert (folder / "index.html").read_text().rstrip().endswith("</html>")
    assert_interrupted_and_clean(run, signal.SIGTERM, code)


CHAOS_TRIALS = 20
# Three trials at a time: each mostly waits (on its cluster, its scenario).
CHAOS_AT_ONCE = 3


def _trial(folder: pathlib.Path, signum: signal.Signals, delay: float) -> tuple[float, str, int]:
    run = Run(folder)
    deadline = time.monotonic() + delay
    while run.proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the random moment itself: nothing to wait on but the clock
    code = run.proc.returncode if run.proc.poll() is not None else run.signal(signum)
    assert_interrupted_and_clean(run, signum, code)
    return round(delay, 1), signum.name, code


def test_interrupts_at_random_moments_never_certify_and_leave_nothing(tmp_path: pathlib.Path) -> None:
    """SIGINT or SIGTERM at 20 random moments of the short run's first 14 s: start-up, the cluster
    and the reference starting, the first scenario, and the second one's start."""
    rng = random.Random(20261125)
    trials = [(tmp_path / f"trial-{i}", rng.choice([signal.SIGINT, signal.SIGTERM]), rng.uniform(0.0, 14.0)) for i in range(CHAOS_TRIALS)]
    with concurrent.futures.ThreadPoolExecutor(CHAOS_AT_ONCE) as pool:
        outcomes = list(pool.map(lambda trial: _trial(*trial), trials))
    # The moments spread over the run: most interrupted it.
    assert sum(code not in (0, 1) for _, _, code in outcomes) >= CHAOS_TRIALS // 2, outcomes


def test_a_run_that_reaches_its_timeout_is_reported_incomplete(tmp_path: pathlib.Path) -> None:
    """`--timeout` ends the run as an interruption would: exit 124, the report says so."""
    run = Run(tmp_path, "--timeout", "25s")
    code = run.proc.wait(EXIT_TIMEOUT_S + 25)
    assert code == 124, run.output()[-3000:]
    assert "INTERRUPTED by timeout (25s)" in run.output()
    data = json.loads((run.reports / "run" / "report.json").read_text())
    assert data["run"]["interrupted"] == "timeout (25s)" and data["summary"]["certified"] is False
    assert not (run.reports / "latest").exists()
    assert not processes.under(run.state) and not list(run.state.iterdir())


def test_a_killed_run_leaves_clusters_that_list_shows_and_prune_removes(tmp_path: pathlib.Path) -> None:
    """`kill -9` gives `vck run` no chance to clean up: its cluster is listed with an owner that is
    gone, and `vck cluster prune` removes it, processes and state."""
    run = Run(tmp_path)
    run.wait_for("[1/2")
    os.killpg(run.proc.pid, signal.SIGKILL)  # the run and anything else in its session
    run.proc.wait(EXIT_TIMEOUT_S)
    assert processes.under(run.state), "the killed run's cluster should still be running"
    env = {**os.environ, "VCK_STATE_DIR": str(run.state)}
    listed = subprocess.run([sys.executable, "-m", "conformance.cli", "cluster", "list"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and f" {run.proc.pid} " in listed.stdout and "1 cluster(s) whose owner is gone" in listed.stdout, listed.stdout
    pruned = subprocess.run([sys.executable, "-m", "conformance.cli", "cluster", "prune"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=120)
    assert pruned.returncode == 0 and "removed 1 cluster(s)" in pruned.stdout, pruned.stdout + pruned.stderr
    assert not processes.under(run.state) and not list(run.state.iterdir())


def test_prune_keeps_clusters_whose_owner_runs_and_clusters_started_by_hand(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "VCK_STATE_DIR": str(tmp_path / "state")}
    cli = [sys.executable, "-m", "conformance.cli", "cluster"]
    up = subprocess.run([*cli, "up", "--name", "by-hand", "--nodes", "1"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=300)
    assert up.returncode == 0, up.stderr
    try:
        pruned = subprocess.run([*cli, "prune"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=120)
        assert "removed 0 cluster(s)" in pruned.stdout, pruned.stdout
        listed = subprocess.run([*cli, "list"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=60)
        assert "by-hand" in listed.stdout and "by hand" in listed.stdout, listed.stdout
    finally:
        subprocess.run([*cli, "down", "--name", "by-hand"], cwd=suite_runs.REPO, env=env, capture_output=True, text=True, timeout=120)
