"""`python -m reference_scheduler.scheduler --kubeconfig PATH --scheduler-conf PATH
[--scheduler-name volcano] [--schedule-period 1s]`: the flags vc-scheduler takes."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time

from reference_scheduler.kube import client
from reference_scheduler.scheduler import cache as cache_mod
from reference_scheduler.scheduler import conf
from reference_scheduler.scheduler.framework import framework

log = logging.getLogger("reference_scheduler.scheduler")
# After a change is seen, wait this long for its siblings (a job's pods arrive one by one).
COALESCE_S = 0.05


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
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        configuration = conf.load(args.scheduler_conf)
    except conf.ConfError as err:
        print(f"reference scheduler: {err}", file=sys.stderr)
        return 2
    stop = {"now": False}

    def on_signal(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    cache = cache_mod.Cache(client.api_client(args.kubeconfig), args.scheduler_name)
    cache.ensure_default_queues()
    cache.start()
    log.info("ready: actions %s, %d tiers", ", ".join(configuration.actions), len(configuration.tiers))
    period = _period(args.schedule_period)
    while not stop["now"]:
        cache.changed.wait(period)
        if cache.changed.is_set():
            time.sleep(COALESCE_S)  # coalesce a burst of watch events into one cycle
        cache.changed.clear()
        started = time.monotonic()
        try:
            ssn = framework.run_cycle(cache, configuration)
        except Exception:
            log.exception("scheduling cycle failed")
            continue
        log.debug("cycle %s: %d jobs, %d nodes in %.1f ms", ssn.uid[:8], len(ssn.jobs), len(ssn.nodes), (time.monotonic() - started) * 1000)
    cache.wait_binds()
    return 0


if __name__ == "__main__":
    sys.exit(main())
