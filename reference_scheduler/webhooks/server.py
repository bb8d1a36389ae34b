"""The HTTPS server the API server calls, and the webhook configurations that point it there."""

from __future__ import annotations

import base64
import http.server
import logging
import ssl
import threading
from typing import Any

import kubernetes

from reference_scheduler.kube import client
from reference_scheduler.webhooks import review

log = logging.getLogger(__name__)
# Fixed names: one reference webhook per cluster; the kit's adapter removes them on stop.
MUTATING_NAME = "vck-reference-mutate"
VALIDATING_NAME = "vck-reference-validate"
# The CEL condition under which the API server asks the pod rule at all (validate_pod.KEYS).
POD_JDB_CONDITION = "has(object.metadata.annotations) && ('volcano.sh/jdb-min-available' in object.metadata.annotations || 'volcano.sh/jdb-max-unavailable' in object.metadata.annotations)"


def serve(routes: dict[str, review.Handler], host: str, port: int, cert: str, key: str) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            handler = routes.get(self.path.split("?")[0])
            if handler is None:
                self.send_error(404, f"no admission handler at {self.path}")
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                out = review.answer(handler, body)
            except Exception as err:  # a malformed review: say so, never crash the server
                log.exception("admission %s failed", self.path)
                self.send_error(400, f"bad AdmissionReview: {err}")
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s " + format, self.address_string(), *args)

    server = http.server.ThreadingHTTPServer((host, port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, name="webhook", daemon=True).start()
    return server


def _client_config(base_url: str, path: str, ca_pem: bytes) -> dict[str, Any]:
    return {"url": f"{base_url}{path}", "caBundle": base64.b64encode(ca_pem).decode()}


def register(api: kubernetes.client.ApiClient, base_url: str, ca_pem: bytes) -> None:
    """Create or replace both webhook configurations. Failure policy Fail: while registered,
    nothing the webhook judges is admitted without it."""
    adm = kubernetes.client.AdmissionregistrationV1Api(api)

    def rule(resource: str, operations: list[str], group: str, version: str) -> dict[str, Any]:
        return {"apiGroups": [group], "apiVersions": [version], "resources": [resource], "operations": operations, "scope": "*"}

    common = {"sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail", "timeoutSeconds": 10}
    mutating: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": MUTATING_NAME},
        "webhooks": [
            {"name": "mutatejob.volcano.sh", "clientConfig": _client_config(base_url, "/jobs/mutate", ca_pem), "rules": [rule("jobs", ["CREATE"], "batch.volcano.sh", "v1alpha1")], **common},
            {"name": "mutatequeue.volcano.sh", "clientConfig": _client_config(base_url, "/queues/mutate", ca_pem), "rules": [rule("queues", ["CREATE"], "scheduling.volcano.sh", "v1beta1")], **common},
        ],
    }
    validating: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": VALIDATING_NAME},
        "webhooks": [
            {"name": "validatejob.volcano.sh", "clientConfig": _client_config(base_url, "/jobs/validate", ca_pem), "rules": [rule("jobs", ["CREATE", "UPDATE"], "batch.volcano.sh", "v1alpha1")], **common},
            {"name": "validatequeue.volcano.sh", "clientConfig": _client_config(base_url, "/queues/validate", ca_pem), "rules": [rule("queues", ["CREATE", "UPDATE", "DELETE"], "scheduling.volcano.sh", "v1beta1")], **common},
            {"name": "validatecronjob.volcano.sh", "clientConfig": _client_config(base_url, "/cronjobs/validate", ca_pem), "rules": [rule("cronjobs", ["CREATE", "UPDATE"], "batch.volcano.sh", "v1alpha1")], **common},
            {"name": "validatejobflow.volcano.sh", "clientConfig": _client_config(base_url, "/jobflows/validate", ca_pem), "rules": [rule("jobflows", ["CREATE", "UPDATE"], "flow.volcano.sh", "v1alpha1")], **common},
            {"name": "validatehypernodes.volcano.sh", "clientConfig": _client_config(base_url, "/hypernodes/validate", ca_pem), "rules": [rule("hypernodes", ["CREATE", "UPDATE"], "topology.volcano.sh", "v1alpha1")], **common},
            {"name": "validatepodgroup.volcano.sh", "clientConfig": _client_config(base_url, "/podgroups/validate", ca_pem), "rules": [rule("podgroups", ["CREATE"], "scheduling.volcano.sh", "v1beta1")], **common},
            {
                "name": "validatepod.volcano.sh",
                "clientConfig": _client_config(base_url, "/pods/validate", ca_pem),
                "rules": [rule("pods", ["CREATE"], "", "v1")],
                # Only pods that carry a job disruption budget annotation can be refused: the API
                # server sends the webhook those alone, so no other pod waits on it.
                "matchConditions": [{"name": "jdb-annotated", "expression": POD_JDB_CONDITION}],
                **common,
            },
        ],
    }
    for body, create, delete in (
        (mutating, adm.create_mutating_webhook_configuration, adm.delete_mutating_webhook_configuration),
        (validating, adm.create_validating_webhook_configuration, adm.delete_validating_webhook_configuration),
    ):
        try:
            delete(body["metadata"]["name"])
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                raise
        create(client.as_body(body))


def unregister(api: kubernetes.client.ApiClient) -> None:
    adm = kubernetes.client.AdmissionregistrationV1Api(api)
    for delete, name in ((adm.delete_mutating_webhook_configuration, MUTATING_NAME), (adm.delete_validating_webhook_configuration, VALIDATING_NAME)):
        try:
            delete(name)
        except kubernetes.client.ApiException as err:
            if err.status != 404:
                log.warning("removing webhook configuration %s: HTTP %s", name, err.status)
