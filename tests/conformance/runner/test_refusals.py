"""A change the API may refuse (runner.steps.refusable): `patch`, `delete` and `scale` steps, like
`apply`, can expect a refusal with its reason. A refusal is the implementation's answer, judged
against the regex, or a failed step without one; never a kit error."""

from __future__ import annotations

import json
import types
from typing import Callable

import kubernetes
import pytest

from conformance.runner import steps


def ctx() -> steps.StepContext:
    recorder = types.SimpleNamespace(now=lambda: 1.5)
    return steps.StepContext(client=None, namespace="ns", rec=recorder, time_scale=1.0)  # type: ignore[arg-type]


def refused(status: int, message: str) -> Callable[[], None]:
    def change() -> None:
        err = kubernetes.client.ApiException(status=status, reason="BadRequest")
        err.body = json.dumps({"message": message})
        raise err

    return change


WEBHOOK = 'admission webhook "validatequeue.volcano.sh" denied the request: queue busy cannot be the parent queue of queue loner because it has allocated Pods: 1'


def test_an_expected_refusal_is_judged_against_its_reason() -> None:
    check = steps.refusable(ctx(), refused(400, WEBHOOK), "the patch of Queue loner", r"cannot be the parent queue of queue loner", "move loner")
    assert check is not None and check.passed and check.observed == f"refused: {WEBHOOK}" and check.at_s == 1.5
    wrong = steps.refusable(ctx(), refused(400, WEBHOOK), "the patch of Queue loner", r"weight must be", "move loner")
    assert wrong is not None and not wrong.passed


def test_a_change_that_should_have_been_refused_fails_its_check() -> None:
    check = steps.refusable(ctx(), lambda: None, "the deletion of Queue idle", r"can not be deleted", "delete idle")
    assert check is not None and not check.passed and check.observed == "the API accepted it"
    assert steps.refusable(ctx(), lambda: None, "the deletion of Queue idle", None, "delete idle") is None


def test_an_unexpected_refusal_fails_the_step_and_a_broken_api_stays_a_kit_error() -> None:
    with pytest.raises(steps.StepFailed, match=r"the API refused the patch of Queue loner: HTTP 422: .*allocated Pods: 1"):
        steps.refusable(ctx(), refused(422, WEBHOOK), "the patch of Queue loner", None, "move loner")
    with pytest.raises(kubernetes.client.ApiException):
        steps.refusable(ctx(), refused(500, "etcdserver: request timed out"), "the patch of Queue loner", r".*", "move loner")
