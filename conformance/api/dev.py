"""A warm dev session for scenario authors: `vck dev up|status|down`, `vck run --dev [--watch]`.

`dev_up` makes the toolchain and the implementation's build ready here (their progress seen),
then starts the session's process (conformance/dev/server.py) detached and follows its log until
it is ready. `run_dev` sends it a selection and prints each verdict as it comes, a failure
explained (report/explain.py), and writes the run's reports as `vck run` does. `watch` runs the
selection, then again the files that change and the scenarios that failed last.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
from typing import Callable, Iterator, Sequence

from conformance import config as run_config
from conformance import results
from conformance.api import bridge, clusters
from conformance.api import run as api_run
from conformance.cluster import owners, processes
from conformance.dev import protocol
from conformance.impl import registry as impl_registry
from conformance.report import explain, json_report, score
from conformance.scenario import loader
from conformance.toolchain import install

DevError = protocol.DevError
Progress = Callable[[str], None]
# How long a session may take to come up once its toolchain is ready (a cluster and the
# implementation: 15-60 s on 2 busy cores; a kind cluster minutes), and to go down.
UP_TIMEOUT_S = 900.0
DOWN_TIMEOUT_S = 120.0
# How often `--watch` looks at the files' modification times, and how long a change must settle
# (an editor writes a file in more than one go).
WATCH_POLL_S = 0.3
STOPPED = "watch stopped; the dev session stays up (`vck dev down` stops it)"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclasses.dataclass
class DevConfig:
    name: str = protocol.DEFAULT_NAME
    # What the session runs: the implementation, the backend, the Kubernetes release.
    run: run_config.RunConfig = dataclasses.field(default_factory=run_config.RunConfig)

    def validate(self) -> list[str]:
        problems = self.run.validate_settings()
        try:
            protocol.check_name(self.name)
        except DevError as err:
            problems.append(str(err))
        return problems


@dataclasses.dataclass(frozen=True)
class DevStatus:
    info: protocol.SessionInfo
    # What the session says of itself (runs, the scenario under way...).
    state: dict[str, object]


# --- up, status, down ----------------------------------------------------------------------------
def dev_up(config: DevConfig, progress: Progress = _stderr) -> protocol.SessionInfo:
    """Start the session and return once it runs scenarios (DevError: one of that name is up or
    starting, or it could not start; what it started is gone again). Ctrl-C stops it and leaves
    nothing."""
    where = protocol.folder(config.name)
    running = protocol.read(where)
    if running is not None and running.alive():
        raise DevError(f"dev session {config.name!r} is up already (pid {running.pid}, {running.implementation} on {running.backend}): `vck dev down` first, or `vck dev up --name OTHER`")
    starting = protocol.starting(where)
    if starting is not None and starting.alive():
        raise DevError(f"dev session {config.name!r} is starting (pid {starting.pid}): wait for it, or `vck dev down --name {config.name}`")
    _remove_leftovers(config.name, progress)
    _prepare_here(config.run, progress)
    where.mkdir(parents=True, exist_ok=True)
    log_path = where / protocol.LOG_FILE
    env = {k: v for k, v in os.environ.items() if k != owners.OWNER_ENV}
    with open(log_path, "w", encoding="utf-8") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "conformance.dev.server", "--name", config.name, "--folder", str(where), "--config", config.run.to_json()],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
    owner = owners.of_process(server.pid, "vck dev up")
    if owner is not None:
        protocol.mark_starting(where, owner)
    try:
        return _follow_until_ready(server, where, progress)
    except BaseException:
        # Interrupted, or it failed: it stops what it started (SIGTERM), else it is killed; then
        # the clusters it owned and its folder are removed.
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(DOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                progress(f"dev session process {server.pid} did not stop within {DOWN_TIMEOUT_S:.0f}s; killing it")
                server.kill()
                server.wait()
        if owner is not None:
            clusters.prune_clusters(clusters.PruneConfig(owner=owner), progress)
        _remove_leftovers(config.name, progress)
        raise


def _stop(owner: owners.Owner, progress: Progress) -> None:
    """SIGTERM, and the time to stop what it started; SIGKILL after."""
    processes.send_signal(owner.pid, signal.SIGTERM)
    if _wait_gone(owner, DOWN_TIMEOUT_S):
        return
    progress(f"dev session process {owner.pid} did not stop within {DOWN_TIMEOUT_S:.0f}s; killing it")
    processes.send_signal(owner.pid, signal.SIGKILL)
    _wait_gone(owner, 10.0)


def _prepare_here(config: run_config.RunConfig, progress: Progress) -> None:
    """The toolchain and the implementation's build (minutes the first time), in this process
    where their progress is seen, as `vck run` does."""
    implementation = impl_registry.implementation(config.implementation)
    prepare = getattr(implementation, "prepare", None)
    if prepare is not None:
        prepare(progress)
    install.install(progress=progress, kube=api_run.kubernetes_release(config, implementation, progress))
    session_workload_images(config, progress)


def session_workload_images(config: run_config.RunConfig, progress: Progress) -> list[str]:
    """A session whose backend has nodes that run containers (kind's --kind-workers, an existing
    cluster's --lend-nodes) gets the workload images of every scenario that fits on them: which
    ones it will be asked to run is not known yet. Built here on kind (minutes the first time,
    then found by their recipe), named by --workload-images elsewhere; written into the session's
    configuration, as `vck run` does. The ids of those scenarios."""
    capacity = config.backend.real_node_capacity()
    wanted = [sc for sc in config.selected() if 0 < sc.real_nodes <= capacity]
    if wanted:
        api_run.prepare_workload_images(config, wanted, progress)
    return [sc.id for sc in wanted]


def _follow_until_ready(server: subprocess.Popen[bytes], where: pathlib.Path, progress: Progress) -> protocol.SessionInfo:
    deadline = time.monotonic() + UP_TIMEOUT_S
    with open(where / protocol.LOG_FILE, encoding="utf-8") as log:
        while True:
            for line in iter(log.readline, ""):
                progress(line.rstrip("\n"))
            info = protocol.read(where)
            if info is not None and info.pid == server.pid:
                return info
            if server.poll() is not None:
                for line in iter(log.readline, ""):
                    progress(line.rstrip("\n"))  # its last words, before its folder goes
                raise DevError(f"the dev session did not start (exit {server.returncode}): its log is above")
            if time.monotonic() > deadline:
                raise DevError(f"the dev session was not ready within {UP_TIMEOUT_S:.0f}s; its log: {where / protocol.LOG_FILE}")
            # Following a log file: there is nothing to wait on but the file growing.
            time.sleep(0.1)


def dev_status(name: str = protocol.DEFAULT_NAME) -> DevStatus:
    """The session and what it says of itself (DevError: none is up, or it does not answer)."""
    info = _live(name)
    answers = list(protocol.request(info, {"op": "status"}, timeout_s=protocol.CONNECT_TIMEOUT_S))
    if not answers or answers[0].get("event") != "status":
        raise DevError(f"dev session {name!r} (pid {info.pid}) answered {answers!r} to a status request")
    return DevStatus(info, {k: v for k, v in answers[0].items() if k != "event"})


def dev_down(name: str = protocol.DEFAULT_NAME, progress: Progress = _stderr) -> bool:
    """Stop the session: its scenario under way is interrupted and cleaned up, then the
    implementation and the cluster stop. False when none was up (a dead one's leftovers are
    removed all the same)."""
    where = protocol.folder(name)
    info = protocol.read(where)
    if info is None or not info.alive():
        _remove_leftovers(name, progress)
        return False
    try:
        list(protocol.request(info, {"op": "down"}, timeout_s=protocol.CONNECT_TIMEOUT_S))
        stopped = _wait_gone(info.owner(), DOWN_TIMEOUT_S)
    except (DevError, OSError) as err:
        progress(f"dev session {name}: {err}; stopping it with SIGTERM")
        stopped = False
    if not stopped:
        _stop(info.owner(), progress)
        clusters.prune_clusters(clusters.PruneConfig(owner=info.owner()), progress)
    # Whatever a session that had to be killed left (its cluster, its folder).
    _remove_leftovers(name, progress)
    return True


def _live(name: str) -> protocol.SessionInfo:
    info = protocol.read(protocol.folder(name))
    if info is None or not info.alive():
        raise DevError(f"no dev session {name!r} is up: start one with `vck dev up`" + (" (its last one is gone: `vck dev up` cleans up after it)" if info else ""))
    return info


def _wait_gone(owner: owners.Owner, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while owner.alive():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)  # a process of another parent: nothing to wait on but its /proc entry
    return True


def _remove_leftovers(name: str, progress: Progress) -> None:
    """A session that is gone: its cluster (owned by its process) and its folder."""
    where = protocol.folder(name)
    info = protocol.read(where)
    starting = protocol.starting(where)
    if (info is not None and info.alive()) or (starting is not None and starting.alive()):
        return  # up, or coming up: nothing of it is left over
    for owner in (o for o in (info.owner() if info else None, starting) if o is not None):
        clusters.prune_clusters(clusters.PruneConfig(owner=owner), progress)
    if where.exists():
        shutil.rmtree(where, ignore_errors=True)
    with contextlib.suppress(OSError):
        protocol.root().rmdir()  # the last session's: an empty folder is state too


def list_sessions() -> list[protocol.SessionInfo]:
    """Every dev session with a folder (alive or not)."""
    root = protocol.root()
    found = [protocol.read(p) for p in sorted(root.iterdir()) if p.is_dir()] if root.is_dir() else []
    return [info for info in found if info is not None]


def prune_sessions(progress: Progress = lambda _: None) -> list[str]:
    """Remove the folders (and clusters) of sessions whose process is gone, up or starting when it
    went; their names."""
    root = protocol.root()
    gone = []
    for where in sorted(root.iterdir()) if root.is_dir() else []:
        if not where.is_dir() or not protocol.NAME.match(where.name):
            continue
        info, starting = protocol.read(where), protocol.starting(where)
        if (info is not None and info.alive()) or (starting is not None and starting.alive()):
            continue
        _remove_leftovers(where.name, progress)
        gone.append(where.name)
    return gone


# --- runs ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DevRun:
    run: results.RunResult | None
    folder: pathlib.Path | None
    # The loader's errors (file:line) or why nothing ran; empty when the run ran.
    problems: tuple[str, ...] = ()
    interrupted: bool = False

    @property
    def failed_ids(self) -> dict[str, str]:
        """The scenarios that did not pass, by id, with their files."""
        return {sc.id: sc.path for sc in (self.run.scenarios if self.run else ()) if explain.needs_explaining(sc)}


def run_dev(config: run_config.RunConfig, progress: Progress = _stderr, paths: Sequence[pathlib.Path] | None = None, whole_files: bool = False) -> DevRun:
    """Run the selection on the dev session `config.dev`: one line per verdict, a failure
    explained, the reports written under `config.reports`. `paths`/`whole_files` (watch mode):
    these files' every scenario, whatever the selection's suites and -k."""
    assert config.dev is not None
    info = _live(config.dev)
    message = {
        "op": "run", "paths": [str(pathlib.Path(p).resolve()) for p in (paths if paths is not None else config.scenarios)],
        "suites": [] if whole_files else list(config.suites), "keyword": None if whole_files else config.keyword, "time_scale": config.time_scale,
    }
    started = time.time()
    began = time.monotonic()
    got: list[results.ScenarioResult] = []
    total, versions = 0, {}
    interrupted = finished = False
    try:
        for answer in protocol.request(info, message):
            event = answer.get("event")
            if event in ("refused", "invalid"):
                return DevRun(None, None, tuple(answer.get("problems") or ()))
            if event == "error":
                raise DevError(f"dev session {info.name} could not run it: {answer.get('message')}; its log: {protocol.folder(info.name) / protocol.LOG_FILE}")
            if event == "selected":
                total, versions = len(answer["ids"]), dict(answer.get("versions") or {})
                for warning in answer.get("warnings") or ():
                    progress(f"warning: {warning}")
            elif event == "result":
                result = json_report.scenario_from_dict(answer["result"])
                got.append(result)
                progress(_verdict_line(result, len(got), total, time.monotonic() - began))
                if explain.needs_explaining(result):
                    progress(explain.text(result))
            elif event == "interrupted":
                interrupted = True
            elif event == "done":
                finished = True
    except KeyboardInterrupt:
        # Leaving closes the connection: the session interrupts the scenario and cleans it up.
        interrupted = True
    if not (finished or interrupted):
        raise DevError(f"dev session {info.name} ended the run before its end (is it still up? `vck dev status --name {info.name}`); its log: {protocol.folder(info.name) / protocol.LOG_FILE}")
    if interrupted and not got:
        return DevRun(None, None, (), interrupted=True)
    written = _write(config, info, versions, got, started, total, "SIGINT" if interrupted else "")
    return DevRun(written.run if written else None, written.folder if written else None, interrupted=interrupted)


def _verdict_line(result: results.ScenarioResult, done: int, total: int, elapsed_s: float) -> str:
    minutes, seconds = divmod(int(elapsed_s), 60)
    return f"[{done}/{total} {minutes}:{seconds:02d}] {result.status.value.upper():<11} {result.id} ({result.duration_s:.1f}s, kit {result.overhead_s:.1f}s)"


def _write(
    config: run_config.RunConfig, info: protocol.SessionInfo, versions: dict[str, str], got: list[results.ScenarioResult], started: float, total: int, interrupted: str,
) -> api_run.WrittenRun | None:
    if config.reports is None:
        return None
    # Milliseconds in the id: watch mode runs again within the second.
    run_id = config.run_id or "dev-" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S-%f")[:-3]
    as_run = dataclasses.replace(config, implementation=info.implementation, backend=dataclasses.replace(config.backend, name=info.backend))
    collected = bridge.Collected(results=got, started=started, workers=1, selected=total, interrupted=interrupted, setup_s={})
    return api_run.write(as_run, run_id, collected, said_versions={"kubernetes": info.kubernetes, **versions, "dev session": f"{info.name} (pid {info.pid})"})


def certified(dev_run: DevRun) -> bool:
    return dev_run.run is not None and score.certified(dev_run.run)


def process_age_s() -> float | None:
    """Seconds since this process started (its interpreter's start and imports included): a
    command's wall time as its user waited for it. None where /proc does not say."""
    fields = processes.stat_fields(os.getpid())
    try:
        uptime_s = float(pathlib.Path("/proc/uptime").read_text().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return uptime_s - int(fields[19]) / ticks if fields is not None else None


# --- watch ---------------------------------------------------------------------------------------
def snapshot(paths: Sequence[pathlib.Path]) -> dict[pathlib.Path, tuple[int, int]]:
    """Each scenario file under the paths, by its modification time and size."""
    found = {}
    for path in loader.scenario_files([p for p in paths if p.exists()]):
        try:
            stat = path.stat()
        except OSError:
            continue  # removed while we looked
        found[path.resolve()] = (stat.st_mtime_ns, stat.st_size)
    return found


def changes(paths: Sequence[pathlib.Path], before: dict[pathlib.Path, tuple[int, int]], poll_s: float = WATCH_POLL_S) -> Iterator[list[pathlib.Path]]:
    """The files that changed (or appeared) since `before`, then since the last look, each time
    some did."""
    while True:
        time.sleep(poll_s)  # polling modification times: no watch API for files is at hand
        now = snapshot(paths)
        changed = sorted(p for p, stamp in now.items() if before.get(p) != stamp)
        if changed:
            # Settled: an editor's second write lands in the same pass.
            time.sleep(poll_s)
            now = snapshot(paths)
            changed = sorted(p for p, stamp in now.items() if before.get(p) != stamp)
            if changed:  # none, when the changed file went again before it settled
                yield changed
        before = now


def watch(config: run_config.RunConfig, progress: Progress = _stderr, report: Callable[[DevRun], object] = lambda _: None) -> None:
    """Run the selection, then, at each change under the paths, the changed files' scenarios and
    those that failed last; a file that does not load is shown (file:line) and nothing runs.
    Returns on Ctrl-C (the session stays up)."""
    watched = [pathlib.Path(p) for p in config.scenarios]
    # Taken before the first run: an edit saved while it runs is a change too.
    before = snapshot(watched)
    first = run_dev(config, progress)
    report(first)
    if first.interrupted:
        progress(STOPPED)
        return
    if first.problems:
        progress("not run: fix the file and save it again")
    failing = dict(first.failed_ids)
    progress(f"watching {', '.join(map(str, watched))} (Ctrl-C to stop; the dev session stays up)")
    try:
        for changed in changes(watched, before):
            # A failed scenario's file that is gone (deleted, renamed) is no longer run.
            failing = {i: p for i, p in failing.items() if pathlib.Path(p).exists()}
            again = sorted({*changed, *(pathlib.Path(p).resolve() for p in failing.values())})
            progress(f"changed: {', '.join(p.name for p in changed)}" + (f"; and {len(failing)} that failed last" if failing else ""))
            outcome = run_dev(config, progress, paths=again, whole_files=True)
            report(outcome)
            if outcome.interrupted:
                break
            if outcome.problems:
                progress("not run: fix the file and save it again")
                continue
            if outcome.run is not None:
                # What these files hold now decides: an id renamed in a file is not kept failing.
                ran = set(again)
                failing = {i: p for i, p in failing.items() if pathlib.Path(p).resolve() not in ran} | outcome.failed_ids
            progress(f"watching ({len(failing)} failing)" if failing else "watching (everything passes)")
    except KeyboardInterrupt:
        pass
    progress(STOPPED)
