"""AdmissionReview in, AdmissionReview out: which handler a path calls and how it answers."""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Mapping

from reference_scheduler.controllers.job import defaults
from reference_scheduler.webhooks import (
    mutate_queue,
    validate_cronjob,
    validate_hypernode,
    validate_job,
    validate_jobflow,
    validate_pod,
    validate_podgroup,
    validate_queue,
)

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]


def _allowed(uid: str) -> dict[str, Any]:
    return {"uid": uid, "allowed": True}


def _refused(uid: str, message: str) -> dict[str, Any]:
    return {"uid": uid, "allowed": False, "status": {"message": message, "code": 400, "reason": "BadRequest"}}


def _patched(uid: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    if before.get("spec") == after.get("spec"):
        return _allowed(uid)
    patch = [{"op": "replace" if "spec" in before else "add", "path": "/spec", "value": after["spec"]}]
    return {"uid": uid, "allowed": True, "patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(patch).encode()).decode()}


class Handlers:
    def __init__(
        self,
        queue: validate_job.QueueLookup,
        queues: validate_job.QueueList,
        scheduler_name: str,
        disabled: frozenset[str] = frozenset(),
        queue_any_state: validate_queue.QueueLookup | None = None,
    ) -> None:
        # `queue`: an Open queue as fresh as the API has it (the job rules); `queue_any_state`:
        # any queue, as the webhook's informer has it (the queue rules, as Volcano's lister).
        self.queue = queue
        self.queue_any_state = queue_any_state or queue
        self.queues = queues
        self.scheduler_name = scheduler_name
        self.disabled = disabled

    def routes(self) -> dict[str, Handler]:
        return {
            "/jobs/mutate": self.mutate_job,
            "/jobs/validate": self.validate_job,
            "/queues/mutate": self.mutate_queue,
            "/queues/validate": self.validate_queue,
            "/cronjobs/validate": self.validate_cronjob,
            "/jobflows/validate": self.validate_jobflow,
            "/hypernodes/validate": self.validate_hypernode,
            "/podgroups/validate": self.validate_podgroup,
            "/pods/validate": self.validate_pod,
        }

    def _judged(self, request: Mapping[str, Any], operations: tuple[str, ...], judge: Callable[[], str]) -> dict[str, Any]:
        """Refused with `judge()`'s message when it has one, for the operations the rule covers."""
        if "validation" in self.disabled or request.get("operation") not in operations:
            return _allowed(request["uid"])
        message = judge()
        return _refused(request["uid"], message) if message else _allowed(request["uid"])

    def validate_cronjob(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self._judged(request, ("CREATE", "UPDATE"), lambda: validate_cronjob.validate(request["object"], str(request.get("operation"))))

    def validate_jobflow(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self._judged(request, ("CREATE", "UPDATE"), lambda: validate_jobflow.validate(request["object"]))

    def validate_hypernode(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self._judged(request, ("CREATE", "UPDATE"), lambda: validate_hypernode.validate(request["object"]))

    def validate_podgroup(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self._judged(request, ("CREATE",), lambda: validate_podgroup.validate(request["object"], self.queue_any_state))

    def validate_pod(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return self._judged(request, ("CREATE",), lambda: validate_pod.validate(request["object"], (self.scheduler_name,)))

    def mutate_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        job = request["object"]
        if request.get("operation") != "CREATE" or "defaults" in self.disabled:
            return _allowed(request["uid"])
        return _patched(request["uid"], job, defaults.with_defaults(job, self.scheduler_name))

    def validate_job(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if "validation" in self.disabled:
            return _allowed(request["uid"])
        if request.get("operation") == "CREATE":
            message = validate_job.validate_create(request["object"], self.queue, self.queues)
        elif request.get("operation") == "UPDATE":
            message = validate_job.validate_update(request["oldObject"], request["object"])
        else:
            message = ""
        return _refused(request["uid"], message) if message else _allowed(request["uid"])

    def validate_queue(self, request: Mapping[str, Any]) -> dict[str, Any]:
        operation = request.get("operation")
        if "validation" in self.disabled or operation not in ("CREATE", "UPDATE", "DELETE"):
            return _allowed(request["uid"])
        if operation == "DELETE":
            message = validate_queue.validate_delete(request["name"], self.queue_any_state, self.queues)
        else:
            queue = request["object"]
            message = validate_queue.validate(queue) or validate_queue.validate_annotations(queue, self.queues)
            old_parent = ((request.get("oldObject") or {}).get("spec") or {}).get("parent") or ""
            if not message and (operation == "CREATE" or old_parent != ((queue.get("spec") or {}).get("parent") or "")):
                message = validate_queue.validate_hierarchy(queue, self.queue_any_state, self.queues)
        return _refused(request["uid"], message) if message else _allowed(request["uid"])

    def mutate_queue(self, request: Mapping[str, Any]) -> dict[str, Any]:
        queue = request["object"]
        if request.get("operation") != "CREATE" or "defaults" in self.disabled:
            return _allowed(request["uid"])
        return _patched(request["uid"], queue, mutate_queue.with_defaults(queue))


def answer(handler: Handler, body: bytes) -> bytes:
    review = json.loads(body)
    response = handler(review["request"])
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}).encode()
