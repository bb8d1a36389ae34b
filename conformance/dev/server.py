"""A dev session's process: `vck dev up` starts it detached (`python -m conformance.dev.server`).

It starts a cluster and the implementation once (conformance.session, as a run's worker does) and
keeps them, then runs the scenarios each `vck run --dev` asks for, in this one process, one run
at a time: the implementation restarts only when a scenario's scheduler conf differs from the
running one, the nodes are reshaped as in any run, and each scenario's objects are cleaned up
after it, whatever its verdict. A client that goes away mid-run (Ctrl-C) interrupts the scenario,
which is cleaned up like any other. The session owns its cluster (owners.py): killed, it is listed
by `vck cluster list` and removed by `vck cluster prune`, with its folder.

The main thread runs scenarios (a signal interrupts a wait there); a thread accepts connections
and answers `status` at once, queues `run`s, and on `down` stops the session.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import pathlib
import queue
import secrets
import signal
import socket
import sys
import threading
import time
from typing import Any

from conformance import config as run_config
from conformance import interrupts, session
from conformance.cluster import owners, workload_images
from conformance.dev import catalog, protocol
from conformance.report import json_report
from conformance.runner import scenario_run

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Request:
    message: dict[str, Any]
    conn: socket.socket
    # Set by the main thread once the run is over: a client that closes after this interrupts nothing.
    done: threading.Event = dataclasses.field(default_factory=threading.Event)
    # Set when the client went away (Ctrl-C): a queued run never starts, a running one stops.
    abandoned: threading.Event = dataclasses.field(default_factory=threading.Event)


class DevServer:
    def __init__(self, name: str, where: pathlib.Path, config: run_config.RunConfig) -> None:
        self.name = name
        self.where = where
        self.config = config
        self.session = session.Session(session.SessionOptions(run=config, worker="dev", cluster_name=f"vck-dev-{name}", progress=_say))
        self.catalog = catalog.Catalog()
        self.requests: queue.Queue[Request] = queue.Queue()
        self.stopping = threading.Event()
        self.token = secrets.token_hex(16)
        self._lock = threading.Lock()
        # The run under way (None between runs).
        self._current: Request | None = None
        # True only while scenarios run (a signal then interrupts the one under way, whose cleanup
        # holds it until done) and while the cluster and the implementation start (SIGTERM).
        self._interruptible = False
        self._starting = False
        self._scenario = ""
        self.runs = 0
        self.scenarios_run = 0
        self.last_tally: dict[str, int] = {}
        self.since = time.time()

    # --- the process ----------------------------------------------------------------------------
    def serve(self) -> None:
        signal.signal(signal.SIGINT, self._on_signal)
        signal.signal(signal.SIGTERM, self._on_signal)
        listener = socket.create_server(("127.0.0.1", 0))
        try:
            with owners.claimed_for_this_run() as owner:
                try:
                    self._starting = True
                    try:
                        self._start(owner, listener.getsockname()[1])
                    finally:
                        self._starting = False
                    threading.Thread(target=self._accept, args=(listener,), name="accept", daemon=True).start()
                    self._loop()
                finally:
                    _close(listener)  # wakes the thread blocked in accept()
                    _say(f"dev session {self.name}: stopping the implementation and the cluster")
                    # Nothing interrupts the stop: what it leaves would outlive the session.
                    with interrupts.deferred():
                        self.session.close()
        finally:
            (self.where / protocol.SESSION_FILE).unlink(missing_ok=True)
            _say(f"dev session {self.name}: down")

    def _start(self, owner: owners.Owner, port: int) -> None:
        began = time.monotonic()
        spent = self.session.prepare(None)
        handle = self.session.cluster()
        implementation = self.session.implementation()
        info = protocol.SessionInfo(
            name=self.name, pid=owner.pid, started=owner.started, port=port, token=self.token, implementation=self.config.implementation,
            backend=handle.backend, cluster=handle.name, kubeconfig=str(handle.kubeconfig), kubernetes=self.config.backend.kubernetes(), since=self.since,
        )
        # What the session's reports state: the implementation's versions and its workload images.
        self.versions = {**implementation.versions(), **workload_images.as_versions(self.config.backend.images)}
        # The kit's own scenarios read once now: the first run does not pay for it.
        self.catalog.select([run_config.DEFAULT_SCENARIOS])
        info.write(self.where)
        _say(f"dev session {self.name}: ready in {time.monotonic() - began:.1f}s ({', '.join(f'{k} {v:.1f}s' for k, v in spent.items())}); port {port}")

    def _on_signal(self, signum: int, frame: object) -> None:
        """SIGTERM stops the session; either signal interrupts the run under way (the scenario is
        cleaned up as it unwinds). Between runs SIGINT does nothing: only `down` ends a session."""
        if signum == signal.SIGTERM:
            self.stopping.set()
        if self._interruptible or (self._starting and signum == signal.SIGTERM):
            interrupts.RECORD.interrupt(signum)

    def _loop(self) -> None:
        while not self.stopping.is_set():
            try:
                request = self.requests.get(timeout=0.5)
            except queue.Empty:
                continue
            try:
                try:
                    self._run(request)
                except KeyboardInterrupt as err:
                    _say(f"dev session {self.name}: run interrupted ({err}); its scenario was cleaned up")
                    _send(request.conn, {"event": "interrupted", "scenario": self._scenario})
                    # Shaped half-way, maybe: the next scenario compares the nodes afresh.
                    self.session.context().forget_nodes()
                except Exception as err:
                    # A request the session cannot serve fails alone; the session stays up.
                    log.exception("run failed")
                    _send(request.conn, {"event": "error", "message": f"{err.__class__.__name__}: {err}"})
            except KeyboardInterrupt:
                pass  # a second signal while the first was reported: nothing more to stop
            finally:
                self._interruptible = False
                interrupts.RECORD.forget()
                with self._lock:
                    self._current = None
                    self._scenario = ""
                request.done.set()
                _close(request.conn)

    # --- connections ----------------------------------------------------------------------------
    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener closed: the session is stopping
            threading.Thread(target=self._receive, args=(conn,), name="request", daemon=True).start()

    def _receive(self, conn: socket.socket) -> None:
        conn.settimeout(protocol.CONNECT_TIMEOUT_S)
        try:
            with conn.makefile("r", encoding="utf-8") as stream:
                message = json.loads(stream.readline() or "{}")
        except (OSError, ValueError):
            _close(conn)
            return
        if not secrets.compare_digest(str(message.get("token", "")), self.token):
            _send(conn, {"event": "refused", "problems": ["wrong token: this is not your dev session"]})
            _close(conn)
            return
        op = message.get("op")
        if op == "run" and not self.stopping.is_set():
            conn.settimeout(None)
            request = Request(message, conn)
            self.requests.put(request)
            self._watch_client(request)
            return
        if op == "status":
            _send(conn, {"event": "status", **self.status()})
        elif op == "down":
            self.stopping.set()
            self._interrupt("vck dev down")
            _send(conn, {"event": "stopping"})
        else:
            _send(conn, {"event": "refused", "problems": [f"unknown request {op!r}" if not self.stopping.is_set() else "the session is stopping"]})
        _close(conn)

    def _watch_client(self, request: Request) -> None:
        """Wait until the client closes its side; if the run is not over by then (Ctrl-C), it is
        abandoned: interrupted if it runs, never started if it waits."""
        try:
            while request.conn.recv(1024):
                pass
        except OSError:
            pass
        if not request.done.is_set():
            request.abandoned.set()
            if self._current is request:
                self._interrupt("the client went away")

    def _interrupt(self, why: str) -> None:
        """Interrupt the scenario under way (a signal to the main thread, which runs it; ignored
        there unless scenarios are running)."""
        if self._interruptible:
            _say(f"dev session {self.name}: interrupting the run ({why})")
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def status(self) -> dict[str, Any]:
        return {
            "runs": self.runs, "scenarios_run": self.scenarios_run, "running": self._scenario, "last_tally": self.last_tally,
            "uptime_s": round(time.time() - self.since, 1), "queued": self.requests.qsize(),
        }

    # --- a run ----------------------------------------------------------------------------------
    def _run(self, request: Request) -> None:
        message = request.message
        with self._lock:
            self._current = request
        if request.abandoned.is_set():
            return
        given = message.get("paths")
        if given is not None and not given:
            _send(request.conn, {"event": "refused", "problems": ["no scenario file or folder was given"]})
            return
        paths = [pathlib.Path(p) for p in given] if given is not None else [run_config.DEFAULT_SCENARIOS]
        try:
            selection = self.catalog.select(paths, message.get("suites") or (), message.get("keyword"))
        except catalog.SelectionError as err:
            _send(request.conn, {"event": "refused", "problems": [str(err)]})
            return
        if selection.errors:
            _send(request.conn, {"event": "invalid", "problems": list(selection.errors)})
            return
        if not selection.scenarios:
            _send(request.conn, {"event": "refused", "problems": [_nothing_selected(message)]})
            return
        # As a run's worker orders them: scenarios sharing a conf and node shapes together.
        chosen = sorted(selection.scenarios, key=lambda sc: (sc.scheduler_key(), repr((sc.nodes, sc.profile)), sc.suite, sc.id))
        ctx = self.session.context()
        ctx.warm = True
        ctx.time_scale = float(message.get("time_scale") or 1.0)
        _send(request.conn, {"event": "selected", "ids": [sc.id for sc in chosen], "warnings": list(selection.warnings), "versions": self.versions})
        self.runs += 1
        tally: dict[str, int] = {}
        self._interruptible = True
        try:
            for sc in chosen:
                if request.abandoned.is_set():
                    raise KeyboardInterrupt("the client went away")
                self._scenario = sc.id
                result = scenario_run.run(sc, ctx)
                self.scenarios_run += 1
                tally[result.status.value] = tally.get(result.status.value, 0) + 1
                _send(request.conn, {"event": "result", "result": json_report.scenario_to_dict(result)})
        finally:
            self._interruptible = False
        self.last_tally = tally
        _send(request.conn, {"event": "done"})


def _nothing_selected(message: dict[str, Any]) -> str:
    if message.get("keyword"):
        return f"no scenario matches -k {message['keyword']!r}"
    return "no scenario was selected"


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    """To a client that may have gone (Ctrl-C): what it misses, it did not want."""
    try:
        protocol.send(conn, message)
    except OSError:
        pass


def _close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


def _say(line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.dev.server")
    parser.add_argument("--name", required=True)
    parser.add_argument("--folder", required=True, type=pathlib.Path)
    parser.add_argument("--config", required=True, help="the run configuration (config.RunConfig.to_json)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    config = run_config.RunConfig.from_json(args.config)
    os.environ.pop(owners.OWNER_ENV, None)  # this process owns what it starts, not whoever started it
    try:
        DevServer(args.name, args.folder, config).serve()
    except KeyboardInterrupt:
        _say(f"dev session {args.name}: stopped before it was up; what it started is gone")
        return 130
    finally:
        interrupts.forget_caught_interrupts()  # every interrupted scenario was a caught KeyboardInterrupt
    return 0


if __name__ == "__main__":
    sys.exit(main())
