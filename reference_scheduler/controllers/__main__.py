"""`python -m reference_scheduler.controllers --kubeconfig PATH [--scheduler-name volcano]`

The job, queue and PodGroup controllers in one process (vc-controller-manager's role).
`--disable` switches features off to build the broken controller the kit's tests need:
policies, job-plugins, dependson, ttl, commands, elastic, queue, podgroup.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time

from reference_scheduler.controllers import podgroup, queue
from reference_scheduler.controllers.job import controller, features
from reference_scheduler.kube import client, signals

log = logging.getLogger("reference_scheduler.controllers")
RESYNC_S = 5.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reference-controllers", description=__doc__)
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("--scheduler-name", default="volcano")
    parser.add_argument("--disable", default="", help="comma list of features to switch off")
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    disabled = {x.strip() for x in args.disable.split(",") if x.strip()}
    stop = threading.Event()
    api = client.api_client(args.kubeconfig)
    jobs = controller.JobController(api, features.Features.without(disabled))
    # Wake the loop too, so a stop does not wait for the next resync.
    signals.set_events_on((signal.SIGTERM, signal.SIGINT), stop, jobs.changed)
    queues = queue.QueueController(api, jobs.changed, jobs.podgroups, jobs.commands)
    groups = podgroup.PodGroupController(api, jobs.pods, jobs.podgroups, args.scheduler_name)
    queues.queues.start()
    jobs.start()
    if not queues.queues.synced.wait(60):
        raise TimeoutError("the queues cache did not sync within 60s")
    log.info("ready: job, queue and podgroup controllers (disabled: %s)", ",".join(sorted(disabled)) or "none")
    while not stop.is_set():
        # Level-triggered: every change, a due timer (policy timeouts, TTLs) or a periodic resync
        # reconciles everything from the caches.
        wait = RESYNC_S if jobs.next_wake is None else max(0.05, min(RESYNC_S, jobs.next_wake - time.time()))
        jobs.changed.wait(wait)
        jobs.changed.clear()
        if stop.is_set():
            break
        for name, loop in (("job", jobs.reconcile_all), ("queue", queues.reconcile_all), ("podgroup", groups.reconcile_all)):
            if name in disabled:
                continue
            try:
                loop()
            except Exception:
                log.exception("%s reconcile failed", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
