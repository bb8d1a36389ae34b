"""The reference webhook's routes (webhooks/review.py): a request is refused with the rule's message,
or admitted; with validation switched off everything is admitted."""

from __future__ import annotations

from reference_scheduler.webhooks import review
from tests.reference.builders import flows


def test_routes_refuse_with_the_rules_message_and_validation_off_admits() -> None:
    handlers = review.Handlers(lambda name: None, lambda: [], "volcano")
    request = {"uid": "u1", "operation": "CREATE", "object": flows(("a", ["a"]))}
    assert handlers.routes()["/jobflows/validate"](request) == {"uid": "u1", "allowed": False, "status": {"message": "jobflow Flow is not DAG", "code": 400, "reason": "BadRequest"}}
    assert handlers.routes()["/podgroups/validate"]({"uid": "u2", "operation": "UPDATE", "object": {"spec": {"queue": "gone"}}})["allowed"]
    off = review.Handlers(lambda name: None, lambda: [], "volcano", frozenset({"validation"}))
    assert off.routes()["/jobflows/validate"](request)["allowed"]
