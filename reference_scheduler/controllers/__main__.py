"""`python -m reference_scheduler.controllers --kubeconfig PATH [--scheduler-name volcano]`

The job, queue, PodGroup, CronJob, JobFlow/JobTemplate and HyperNode controllers in one process
(vc-controller-manager's role). `--disable` switches features off to build the broken controller
the kit's tests need: policies, job-plugins, dependson, ttl, commands, elastic, network-topology,
queue, podgroup, cronjob, jobflow, hypernode.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time

from reference_scheduler.controllers import hypernode, podgroup, queue
from reference_scheduler.controllers.cronjob import controller as cronjob
from reference_scheduler.controllers.job import controller, features
from reference_scheduler.controllers.jobflow import controller as jobflow
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
    switched = features.Features.without(disabled)
    jobs = controller.JobController(api, switched)
    # Wake the loop too, so a stop does not wait for the next resync.
    signals.set_events_on((signal.SIGTERM, signal.SIGINT), stop, jobs.changed)
    queues = queue.QueueController(api, jobs.changed, jobs.podgroups, jobs.commands)
    groups = podgroup.PodGroupController(api, jobs.pods, jobs.podgroups, args.scheduler_name, switched.network_topology)
    cronjobs = cronjob.CronJobController(api, jobs.changed, jobs.jobs)
    flows = jobflow.JobFlowController(api, jobs.changed, jobs.jobs)
    hypernodes = hypernode.HyperNodeController(api, jobs.changed)
    optional = (queues.queues, cronjobs.cronjobs, *flows.stores(), *hypernodes.stores())
    for store in optional:
        store.start()
    jobs.start()
    if "podgroup" not in disabled:
        groups.start()
    for store in optional:
        if not store.synced.wait(60):
            raise TimeoutError(f"the {store.name} cache did not sync within 60s")
    log.info("ready: job, queue, podgroup, cronjob, jobflow and hypernode controllers (disabled: %s)", ",".join(sorted(disabled)) or "none")
    while not stop.is_set():
        # Level-triggered: every change, a due timer (policy timeouts, TTLs, cron schedule times)
        # or a periodic resync reconciles everything from the caches.
        wakes = [w for w in (jobs.next_wake, cronjobs.next_wake, flows.next_wake) if w is not None]
        wait = RESYNC_S if not wakes else max(0.05, min(RESYNC_S, min(wakes) - time.time()))
        jobs.changed.wait(wait)
        jobs.changed.clear()
        if stop.is_set():
            break
        loops = (("job", jobs.reconcile_all), ("queue", queues.reconcile_all), ("podgroup", groups.reconcile_all), ("cronjob", cronjobs.reconcile_all), ("jobflow", flows.reconcile_all), ("hypernode", hypernodes.reconcile_all))
        for name, loop in loops:
            if name in disabled:
                continue
            try:
                loop()
            except Exception:
                log.exception("%s reconcile failed", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
