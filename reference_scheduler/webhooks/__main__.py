"""`python -m reference_scheduler.webhooks --kubeconfig PATH [--port 0] [--host 127.0.0.1]`

Serves the admission webhook, registers it with the API server (URL on --host, for an API
server that reaches this machine directly, as the embedded cluster's does), waits until the API
server actually calls it, prints `ready`, and unregisters on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib
import signal
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Mapping, cast

import kubernetes

from reference_scheduler.kube import client, informer, signals
from reference_scheduler.webhooks import review, server, tls

log = logging.getLogger("reference_scheduler.webhooks")
SCHEDULING = ("scheduling.volcano.sh", "v1beta1")
LIVE_TIMEOUT_S = 30.0


def _queue_from_api(api: kubernetes.client.ApiClient) -> Callable[[str], Mapping[str, Any] | None]:
    """Any queue as the API has it now (None: there is none). The queue rules read a parent's
    status.allocated with it: the scheduler may have written it a moment ago."""
    custom = kubernetes.client.CustomObjectsApi(api)

    def queue(name: str) -> Mapping[str, Any] | None:
        try:
            return cast(Mapping[str, Any], custom.get_cluster_custom_object(*SCHEDULING, "queues", name))
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                return None
            raise

    return queue


def _queue_lookups(api: kubernetes.client.ApiClient, store: informer.Store) -> tuple[Any, Any]:
    from_api = _queue_from_api(api)

    def queue(name: str) -> Mapping[str, Any] | None:
        found = store.get("", name)
        if found is not None and (found.get("status") or {}).get("state") == "Open":
            return found
        # A queue created a moment ago may not have reached the watch yet, nor its opening by
        # the queue controller: ask the API, so a refusal is never due to this cache's lag.
        return from_api(name)

    return queue, store.snapshot


def _wait_live(api: kubernetes.client.ApiClient, deadline_s: float) -> None:
    """Until the API server calls the webhook: a dry-run Job without tasks must be refused with
    the webhook's reason (the configurations take effect asynchronously). `tasks` is left out
    rather than empty: the CRD refuses an empty list itself (minItems, as Volcano's from v1.14),
    and only the webhook refuses a Job that has none."""
    custom = kubernetes.client.CustomObjectsApi(api)
    probe = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "vck-webhook-probe"}, "spec": {}}
    deadline = time.monotonic() + deadline_s
    last = ""
    while time.monotonic() < deadline:
        try:
            custom.create_namespaced_custom_object("batch.volcano.sh", "v1alpha1", "default", "jobs", probe, dry_run="All")
            last = "the probe Job was admitted"
        except kubernetes.client.ApiException as err:
            if "No task specified" in (err.body or ""):
                return
            last = f"HTTP {err.status}: {(err.body or '')[:200]}"
        # The registration propagates through the API server's own watch; give it a beat.
        threading.Event().wait(0.2)
    raise TimeoutError(f"the API server did not call the webhook within {deadline_s:.0f}s (last probe: {last})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reference-webhooks", description=__doc__)
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("--host", default="127.0.0.1", help="address the API server reaches this process on")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--scheduler-name", default="volcano")
    parser.add_argument("--cert-dir", default=None)
    parser.add_argument("--disable", default="", help="comma list of checks to skip: defaults, validation (a broken build for the kit's own tests)")
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    api = client.api_client(args.kubeconfig)
    cert_dir = pathlib.Path(args.cert_dir or tempfile.mkdtemp(prefix="vck-webhook-"))
    cert, key, ca_pem = tls.make(cert_dir, [args.host, "localhost"])
    queues = informer.Store("queues", informer.custom_lister(api, *SCHEDULING, "queues"), threading.Event())
    queues.start()
    queues.synced.wait(30)
    lookup, listing = _queue_lookups(api, queues)
    handlers = review.Handlers(lookup, listing, args.scheduler_name, frozenset(x for x in args.disable.split(",") if x), _queue_from_api(api))
    httpd = server.serve(handlers.routes(), args.host, args.port, str(cert), str(key))
    port = httpd.server_address[1]
    stop = threading.Event()
    signals.set_events_on((signal.SIGTERM, signal.SIGINT), stop)
    server.register(api, f"https://{args.host}:{port}", ca_pem)
    try:
        if "validation" not in handlers.disabled:
            _wait_live(api, LIVE_TIMEOUT_S)
        log.info("ready: admission webhook on https://%s:%d (%s)", args.host, port, json.dumps(sorted(handlers.routes())))
        stop.wait()
    finally:
        server.unregister(api)
        httpd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
