"""`python -m conformance.impl.chaos --seed N [--min-s 1] [--max-s 4] -- COMMAND...`

Runs COMMAND, and keeps killing it (SIGKILL, no chance to clean up) at random moments and starting
it again: the way the kit proves an implementation's controller is restart-safe. Its output is
passed through; `ready` is printed once, when the first child is ready. Each kill is logged as
`chaos: killed ...`. Stops (and stops the child) on SIGTERM/SIGINT.

`--kill-on REGEX` also kills the child as soon as a line of its output matches: aimed at the middle
of something, such as the first bind of a gang, where a random moment rarely lands. The child
started after such a kill is spared it (it only dies at a random moment), so work always advances.
"""

from __future__ import annotations

import argparse
import random
import re
import signal
import subprocess
import sys
import threading
import time

READY = re.compile(r"\bready\b")


def _pump(child: subprocess.Popen[str], ready: threading.Event, kill_on: re.Pattern[str] | None, matched: threading.Event) -> None:
    assert child.stdout is not None
    for line in child.stdout:
        sys.stdout.write(line.replace("ready", "child-ready") if ready.is_set() else line)
        sys.stdout.flush()
        if READY.search(line):
            ready.set()
        if kill_on is not None and ready.is_set() and kill_on.search(line) and not matched.is_set():
            matched.set()
            child.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vck-chaos", description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-s", type=float, default=1.0, help="shortest life of a child after it is ready")
    parser.add_argument("--max-s", type=float, default=4.0, help="longest life of a child after it is ready")
    parser.add_argument("--kill-on", default=None, help="also kill the child when a line of its output matches this regular expression")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    rng = random.Random(args.seed)
    kill_on = re.compile(args.kill_on) if args.kill_on else None
    # A plain flag the loops below poll: a handler runs on the main thread between two bytecodes,
    # maybe while that thread holds a lock that Event.set() or Thread.start() would take.
    stopping: list[int] = []

    def on_stop(signum: int, frame: object) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    # SIGHUP is the child's (the reference scheduler reads its conf again): pass it on.
    current: list[subprocess.Popen[str]] = []

    def pass_hup(*_: object) -> None:
        if current and current[-1].poll() is None:
            current[-1].send_signal(signal.SIGHUP)

    signal.signal(signal.SIGHUP, pass_hup)
    kills = 0
    announced = False
    matched = threading.Event()
    while not stopping:
        ready = threading.Event()
        spared = matched.is_set() if kills else False
        matched = threading.Event()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        current[:] = [child]
        pump = threading.Thread(target=_pump, args=(child, ready, None if spared else kill_on, matched), daemon=True)
        pump.start()
        while not ready.wait(0.2):
            if stopping or child.poll() is not None:
                break
        if ready.is_set() and not announced:
            print("chaos: ready (first child is ready)", flush=True)
            announced = True
        # Live for a random while (or until the output matches), then die without warning.
        deadline = rng.uniform(args.min_s, args.max_s)
        waited = 0.0
        while waited < deadline and not stopping and not matched.is_set():
            time.sleep(0.05)  # the random life itself, polled for a signal or a match
            waited += 0.05
        child.kill()
        child.wait()
        pump.join(timeout=5)
        if not stopping:
            kills += 1
            why = "its output matched --kill-on" if matched.is_set() else "at a random moment"
            print(f"chaos: killed pid {child.pid} (kill {kills}, {why})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
