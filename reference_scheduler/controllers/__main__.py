"""`python -m reference_scheduler.controllers --kubeconfig PATH [--scheduler-name volcano]`."""

from __future__ import annotations

import argparse
import logging
import signal
import sys

from reference_scheduler.controllers.job import controller
from reference_scheduler.kube import client

log = logging.getLogger("reference_scheduler.controllers")
RESYNC_S = 5.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reference-controllers", description=__doc__)
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("--scheduler-name", default="volcano")
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = {"now": False}

    def on_signal(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    jobs = controller.JobController(client.api_client(args.kubeconfig))
    jobs.start()
    log.info("ready: job controller")
    while not stop["now"]:
        # Level-triggered: every change (and a periodic resync) reconciles every Job.
        jobs.changed.wait(RESYNC_S)
        jobs.changed.clear()
        try:
            jobs.reconcile_all()
        except Exception:
            log.exception("reconcile failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
