"""The warm dev session as its author uses it, through the real CLI: `vck dev up`, runs on it (a pass
in seconds, a failure explained in the terminal and by `vck explain`, a Ctrl-C mid-scenario), the
next scenario on a clean cluster, watch mode re-running an edited file and refusing a broken edit
with its file:line, and `vck dev down`, a Ctrl-C'd `vck dev up` and a killed session leaving no
process and no state. Each test has its own state folder (VCK_STATE_DIR)."""

from __future__ import annotations

import os
import pathlib
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Iterator

import kubernetes
import pytest

from conformance import api, scaffold
from conformance.cluster import kube, processes
from tests.suite_runs import REPO

pytestmark = pytest.mark.cluster

CLI = [sys.executable, "-m", "conformance.cli"]
FULL_OCCUPANCY = (api.DEFAULT_SCENARIOS / "gang" / "full-occupancy.yaml").read_text()
# A scenario of the author's, in a folder of its suite: as shipped it passes; FAILING makes it
# expect one pod more than the cluster holds, judged in a short window.
MINE = FULL_OCCUPANCY.replace("id: gang-full-occupancy", "id: mine-occupancy").replace("suite: gang", "suite: mine")
FAILING = MINE.replace("count: 8}", "count: 9}").replace("within: 30s\n  - describe: the PodGroup", "within: 3s\n  - describe: the PodGroup")
UP_TIMEOUT_S = 300.0


class Lines:
    """A process's output, line by line, waited on with a deadline."""

    def __init__(self, stream: object) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout_s: float = 120.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"the output ended before {pattern!r}:\n" + "\n".join(self.seen))
            self.seen.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no {pattern!r} within {timeout_s:.0f}s:\n" + "\n".join(self.seen))


@pytest.fixture
def state(tmp_path: pathlib.Path) -> Iterator[dict[str, str]]:
    """The test's own state folder, and whatever is left in it killed after (a failed test)."""
    folder = tmp_path / "state"
    env = {**os.environ, "VCK_STATE_DIR": str(folder)}
    try:
        yield env
    finally:
        left = processes.under(folder)
        processes.stop(left)


def vck(env: dict[str, str], *args: str, cwd: pathlib.Path = REPO, timeout_s: float = UP_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)


def nothing_left(env: dict[str, str]) -> None:
    folder = pathlib.Path(env["VCK_STATE_DIR"])
    assert processes.under(folder) == [], "processes of the session are left"
    left = [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    assert left == [], f"state is left: {left[:5]}"


def scenario_pods(api_client: kubernetes.client.ApiClient, scenario: str) -> list[str]:
    """The pods still in the namespaces of a scenario's runs (the kit labels each namespace)."""
    core = kubernetes.client.CoreV1Api(api_client)
    names = [n.metadata.name for n in core.list_namespace(label_selector=f"conformance.vck.io/scenario={scenario}").items]
    return [f"{ns}/{p.metadata.name}" for ns in names for p in core.list_namespaced_pod(ns).items]


def test_a_dev_session_from_up_to_down(tmp_path: pathlib.Path, state: dict[str, str]) -> None:
    up = vck(state, "dev", "up", "--name", "t")
    assert up.returncode == 0 and "dev session t is up" in up.stdout, up.stdout + up.stderr
    reports = str(tmp_path / "reports")
    listed = vck(state, "cluster", "list")
    assert "vck-dev-t" in listed.stdout and "dev session t: cluster vck-dev-t" in listed.stdout and " yes " in listed.stdout, listed.stdout

    # A shipped scenario, warm: its verdict and the command's own wall time.
    warm = vck(state, "run", "--dev-session", "t", "-k", "gang-full-occupancy", "--reports", reports)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert re.search(r"PASSED +gang-full-occupancy", warm.stdout) and "CERTIFIED (dev session t)" in warm.stdout, warm.stdout
    print(re.findall(r"[\d.]+s from command to verdict", warm.stdout))

    # The author's failing scenario: every failed check explained here, with its timeline.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "occupancy.yaml").write_text(FAILING)
    failed = vck(state, "run", "--dev-session", "t", str(mine), "--reports", reports)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    for said in ("FAILED [MUST] mine/mine-occupancy", "FAIL 1. all eight pods run", "expected: within 3s: exactly 9 Running pods", "observed: not by 3s: 8 matching", "timeline (Pod, and the steps)", "MODIFIED Pod exact-worker-"):
        assert said in failed.stdout, f"{said!r} not in:\n{failed.stdout}"
    run_id = re.search(r"vck explain (\S+)`", failed.stdout)
    assert run_id is not None, failed.stdout
    explained = vck(state, "explain", run_id.group(1), "--reports", reports)
    assert explained.returncode == 0 and "FAIL 1. all eight pods run" in explained.stdout and "timeline (Pod, and the steps)" in explained.stdout, explained.stdout + explained.stderr

    # The next run has a clean cluster: the failed scenario's pods are gone, and a gang that
    # needs every CPU of the cluster runs (one pod left behind would keep it Pending).
    status = vck(state, "dev", "status", "--name", "t")
    assert status.returncode == 0 and "runs 2, scenarios run 2" in status.stdout, status.stdout + status.stderr
    kubeconfig = re.search(r"kubeconfig: (\S+)", status.stdout)
    assert kubeconfig is not None
    cluster_api = kube.client(pathlib.Path(kubeconfig.group(1)), None)
    assert scenario_pods(cluster_api, "mine-occupancy") == []
    again = vck(state, "run", "--dev-session", "t", "-k", "gang-full-occupancy", "--reports", reports)
    assert again.returncode == 0, again.stdout + again.stderr

    # Ctrl-C while a scenario runs: it is interrupted and cleaned up, and the session goes on.
    interrupted = subprocess.Popen([*CLI, "run", "--dev-session", "t", str(mine), "--reports", reports], cwd=REPO, env=state, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    try:
        kube.watch_until(
            kubernetes.client.CoreV1Api(cluster_api).list_pod_for_all_namespaces, lambda pods: any(name.startswith("exact-worker") for name in pods), 60.0, "the scenario's pods",
        )
        interrupted.send_signal(signal.SIGINT)
        out, _ = interrupted.communicate(timeout=60)
    finally:
        if interrupted.poll() is None:
            interrupted.kill()
    assert interrupted.returncode == 130 and "Traceback" not in out, out
    kube.watch_until(
        kubernetes.client.CoreV1Api(cluster_api).list_pod_for_all_namespaces, lambda pods: not any(name.startswith("exact-worker") for name in pods), 60.0, "the interrupted scenario's pods to go",
    )
    after = vck(state, "run", "--dev-session", "t", "-k", "gang-full-occupancy", "--reports", reports)
    assert after.returncode == 0, after.stdout + after.stderr

    # `vck new`'s every shape validates and passes on the reference as written.
    for shape in scaffold.SHAPES:
        made = vck(state, "new", "mine", f"from-{shape}", "--shape", shape, "--root", str(tmp_path / "new"))
        assert made.returncode == 0, made.stdout + made.stderr
    assert "TODO" in (tmp_path / "new" / "mine" / "from-job.yaml").read_text()
    templates = vck(state, "run", "--dev-session", "t", str(tmp_path / "new"), "--reports", reports)
    assert templates.returncode == 0 and "passed 3, failed 0" in templates.stdout, templates.stdout + templates.stderr

    down = vck(state, "dev", "down", "--name", "t")
    assert down.returncode == 0 and "dev session t is down" in down.stdout, down.stdout + down.stderr
    nothing_left(state)
    assert vck(state, "dev", "status", "--name", "t").returncode == 1


def test_watch_runs_an_edited_file_again_and_refuses_a_broken_edit(tmp_path: pathlib.Path, state: dict[str, str]) -> None:
    up = vck(state, "dev", "up", "--name", "w")
    assert up.returncode == 0, up.stdout + up.stderr
    mine = tmp_path / "mine"
    mine.mkdir()
    path = mine / "occupancy.yaml"
    path.write_text(MINE)
    watcher = subprocess.Popen(
        [*CLI, "run", "--dev-session", "w", "--watch", str(mine), "--reports", str(tmp_path / "reports")],
        cwd=REPO, env=state, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL,
    )
    try:
        out = Lines(watcher.stdout)
        out.wait_for(r"PASSED +mine-occupancy")
        out.wait_for(r"^watching ")
        path.write_text(FAILING)
        out.wait_for(r"^changed: occupancy\.yaml")
        out.wait_for(r"FAILED +mine-occupancy")
        out.wait_for(r"FAIL 1\. all eight pods run")
        out.wait_for(r"^watching \(1 failing\)")
        # A broken edit: the loader's error with the file and line, and nothing runs.
        path.write_text(MINE.replace("steps:\n", "steps: [\n", 1))
        refused = out.wait_for(rf"{re.escape(str(path.resolve()))}:\d+: ")
        out.wait_for(r"^not run: fix the file")
        path.write_text(MINE)
        out.wait_for(r"PASSED +mine-occupancy")
        out.wait_for(r"^watching \(everything passes\)")
        watcher.send_signal(signal.SIGINT)
        watcher.wait(60)
        out.wait_for(r"^watch stopped; the dev session stays up")
    finally:
        if watcher.poll() is None:
            watcher.kill()
        vck(state, "dev", "down", "--name", "w")
    assert "not valid YAML" in refused or "expected" in refused, refused
    assert not any("Traceback" in line for line in out.seen), "\n".join(out.seen)
    nothing_left(state)


def test_ctrl_c_during_up_and_a_killed_session_leave_nothing(tmp_path: pathlib.Path, state: dict[str, str]) -> None:
    starting = subprocess.Popen([*CLI, "dev", "up", "--name", "c"], cwd=REPO, env=state, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    try:
        Lines(starting.stdout).wait_for(r"starting etcd, kube-apiserver")
        starting.send_signal(signal.SIGINT)
        starting.wait(180)
    finally:
        if starting.poll() is None:
            starting.kill()
    assert starting.returncode == 130
    nothing_left(state)

    # A session killed with -9 cannot clean up: listed as gone, and pruned with its cluster.
    up = vck(state, "dev", "up", "--name", "k")
    assert up.returncode == 0, up.stdout + up.stderr
    pid = int(re.findall(r"pid (\d+)", up.stdout)[0])
    os.kill(pid, signal.SIGKILL)
    listed = vck(state, "cluster", "list")
    assert "dev session k: cluster vck-dev-k" in listed.stdout and "gone" in listed.stdout and "whose owner is gone" in listed.stdout, listed.stdout
    pruned = vck(state, "cluster", "prune")
    assert pruned.returncode == 0 and "vck-dev-k" in pruned.stdout and "removed dev session k" in pruned.stdout, pruned.stdout + pruned.stderr
    nothing_left(state)
