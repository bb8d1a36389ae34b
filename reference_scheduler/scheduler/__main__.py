"""`python -m reference_scheduler.scheduler --kubeconfig PATH --scheduler-conf PATH
[--scheduler-name volcano] [--schedule-period 1s] [--node-selector key:value]`: the flags
vc-scheduler takes. `--disable scheduling-gates,...` switches rules off (features.py) to build
the broken scheduler the kit's tests need.

The conf file is read again when it changes (checked before each cycle; SIGHUP wakes the loop to
check at once), as vc-scheduler watches its own."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time

from reference_scheduler.kube import connection, signals
from reference_scheduler.scheduler import cache as cache_mod
from reference_scheduler.scheduler import conf, conf_watch, features
from reference_scheduler.scheduler.framework import framework

log = logging.getLogger("reference_scheduler.scheduler")
# After a change is seen, wait this long for its siblings (a job's pods arrive one by one).
COALESCE_S = 0.05
# The longest rest after a long cycle, in schedule periods: a change waits at most this long more.
REST_PERIODS = 10


def _period(text: str) -> float:
    value = text.strip()
    if value.endswith("ms"):
        return float(value[:-2]) / 1000
    if value.endswith("s"):
        return float(value[:-1])
    return float(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reference-scheduler", description=__doc__)
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("--scheduler-conf", default=None)
    parser.add_argument("--scheduler-name", default="volcano")
    parser.add_argument("--schedule-period", default="1s")
    parser.add_argument("--node-selector", action="append", default=[], help="key:value; only nodes with one of these labels are scheduled on (repeatable, as vc-scheduler's)")
    parser.add_argument("--disable", default="", help=f"comma list of rules to switch off: {', '.join(features.Features.names())}")
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    disabled = {name.strip() for name in args.disable.split(",") if name.strip()}
    unknown = sorted(disabled - set(features.Features.names()))
    if unknown:
        print(f"reference scheduler: --disable {', '.join(unknown)}: unknown; known: {', '.join(features.Features.names())}", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        conf_file = conf_watch.ConfFile(args.scheduler_conf)
    except conf.ConfError as err:
        print(f"reference scheduler: {err}", file=sys.stderr)
        return 2
    stop = threading.Event()
    cache = cache_mod.Cache(connection.Connection(args.kubeconfig), args.scheduler_name, [s for item in args.node_selector for s in item.split(",")], features.Features.without(disabled))
    # SIGTERM/SIGINT stop after the cycle in progress; SIGHUP has the loop look at the conf file
    # now rather than at the next period. Either wakes the loop at once.
    signals.set_events_on((signal.SIGTERM, signal.SIGINT), stop, cache.changed)
    signals.set_events_on((signal.SIGHUP,), cache.changed)
    cache.ensure_default_queues()
    cache.start()
    configuration = conf_file.current
    log.info("ready: actions %s, %d tiers", ", ".join(configuration.actions), len(configuration.tiers))
    period = _period(args.schedule_period)
    last_cycle_s, cycles = 0.0, 0
    while not stop.is_set():
        cache.changed.wait(period)
        if stop.is_set():
            break
        if cache.changed.is_set() and cycles:
            # Coalesce a burst of watch events into one cycle (the first follows the caches' sync
            # at once); after a long cycle, rest as long as it took (at most REST_PERIODS
            # periods), so at scale the cycle holds the interpreter about half the time and the
            # bind and watch threads (and the API server) have the rest.
            stop.wait(max(COALESCE_S, min(last_cycle_s, REST_PERIODS * period)))
        cache.changed.clear()
        configuration = conf_file.refresh()
        started, cycles = time.monotonic(), cycles + 1
        try:
            ssn = framework.run_cycle(cache, configuration)
        except Exception:
            log.exception("scheduling cycle failed")
            continue
        last_cycle_s = time.monotonic() - started
        log.debug("cycle %s: %d jobs, %d nodes in %.1f ms", ssn.uid[:8], len(ssn.jobs), len(ssn.nodes), last_cycle_s * 1000)
    cache.wait_binds()
    return 0


if __name__ == "__main__":
    sys.exit(main())
