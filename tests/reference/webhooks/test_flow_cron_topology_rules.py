"""The reference webhook's CronJob, JobFlow, HyperNode, PodGroup and pod rules, in Volcano's words
(admit_cronjob.go, validate_jobflow.go, admit_hypernode.go, validate_podgroup.go, admit_pod.go),
and their routes: refused with the message, or admitted."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.webhooks import (
    review,
    validate_cronjob,
    validate_hypernode,
    validate_jobflow,
    validate_pod,
    validate_podgroup,
)


def cronjob(name: str = "nightly", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {}}, **spec}}


@pytest.mark.parametrize(
    ("cj", "refusal"),
    [
        (cronjob(), ""),
        (cronjob(schedule="30 6-16/4 * * 1-5", timeZone="Europe/Berlin"), ""),
        (cronjob(schedule="@every 1h30m"), ""),
        (cronjob(schedule=""), "schedule is required, but got empty"),
        (cronjob(schedule="61 * * * *"), "schedule is not a valid cron expression"),
        (cronjob(schedule="TZ=UTC * * * * *"), "schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field"),
        (cronjob(timeZone=""), "timeZone must be nil or non-empty string, got empty string"),
        (cronjob(timeZone="Mars/Olympus_Mons"), "invalid timeZone"),
        (cronjob(timeZone="local"), "timeZone can't be Local, and must be defined in https://www.iana.org/time-zones"),
        (cronjob(timeZone="../etc"), "unknown timeZone invalid timeZone"),
        (cronjob(name="n" * 52), ""),
        (cronjob(name="n" * 53), "cronJob name must be no more than 52 characters to accommodate job name suffix (max 63 total)"),
        # Every problem is reported, one after the other, as upstream concatenates them.
        (cronjob(name="n" * 53, schedule="x"), "schedule is not a valid cron expressioncronJob name must be no more than 52 characters to accommodate job name suffix (max 63 total)"),
    ],
)
def test_cronjob_rules(cj: dict[str, Any], refusal: str) -> None:
    assert validate_cronjob.validate(cj, "CREATE") == refusal


def test_on_update_the_message_keeps_its_leading_space() -> None:
    assert validate_cronjob.validate(cronjob(timeZone="Mars/Olympus_Mons"), "UPDATE") == " invalid timeZone"


def flows(*pairs: tuple[str, list[str]]) -> dict[str, Any]:
    return {"spec": {"flows": [{"name": n, **({"dependsOn": {"targets": t}} if t else {})} for n, t in pairs]}}


@pytest.mark.parametrize(
    ("jobflow", "refusal"),
    [
        (flows(("a", []), ("b", ["a"]), ("c", ["a"]), ("d", ["b", "c"])), ""),
        (flows(("a", []), ("b", ["ghost"])), "jobflow Flow is not DAG: vertex is not defined: ghost"),
        (flows(("a", ["c"]), ("b", ["a"]), ("c", ["b"])), "jobflow Flow is not DAG"),
        (flows(("a", ["a"])), "jobflow Flow is not DAG"),
        (flows(), ""),
    ],
)
def test_jobflow_dag(jobflow: dict[str, Any], refusal: str) -> None:
    assert validate_jobflow.validate(jobflow) == refusal


def hypernode(*selectors: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"tier": 1, "members": [{"type": "Node", "selector": s} for s in selectors]}}


@pytest.mark.parametrize(
    ("hn", "refusal"),
    [
        (hypernode({"exactMatch": {"name": "node-0"}}, {"regexMatch": {"pattern": "^rack-"}}, {"labelMatch": {"matchLabels": {"a": "b"}}}), ""),
        ({"spec": {"tier": 1, "members": []}}, "[].spec.members: Invalid value: []v1alpha1.MemberSpec{}: member must have at least one member"),
        ({"spec": {"tier": 1}}, "[].spec.members: Invalid value: []v1alpha1.MemberSpec(nil): member must have at least one member"),
        (hypernode({"exactMatch": {"name": ""}}), '[].spec.members.selector.exactMatch.name: Invalid value: "": member exactMatch name is required'),
        (hypernode({"regexMatch": {"pattern": ""}}), '[].spec.members.selector.regexMatch.pattern: Invalid value: "": member regexMatch pattern is required'),
    ],
)
def test_hypernode_rules(hn: dict[str, Any], refusal: str) -> None:
    assert validate_hypernode.validate(hn) == refusal


def test_hypernode_bad_name_and_pattern_are_both_reported() -> None:
    message = validate_hypernode.validate(hypernode({"exactMatch": {"name": "not a node!"}}, {"regexMatch": {"pattern": "rack-[a-"}}))
    assert message.startswith("[") and "member exactMatch validate failed [name part must consist of" in message and "member regexMatch pattern is invalid" in message


QUEUES = {"open": {"status": {"state": "Open"}}, "shut": {"status": {"state": "Closed"}}}


@pytest.mark.parametrize(
    ("queue", "refusal"),
    [
        ("open", ""),
        ("", ""),
        ("shut", "can only submit PodGroup to queue with state `Open`, queue `shut` status is `Closed`"),
        ("gone", 'unable to find queue: queue.scheduling.volcano.sh "gone" not found'),
    ],
)
def test_podgroup_queue(queue: str, refusal: str) -> None:
    assert validate_podgroup.validate({"spec": {"minMember": 1, "queue": queue}}, QUEUES.get) == refusal


def pod(scheduler: str = "volcano", **annotations: str) -> dict[str, Any]:
    return {"metadata": {"annotations": annotations}, "spec": {"schedulerName": scheduler}}


MIN, MAX = validate_pod.JDB_MIN_AVAILABLE, validate_pod.JDB_MAX_UNAVAILABLE


@pytest.mark.parametrize(
    ("p", "refusal"),
    [
        (pod(), ""),
        (pod(**{MIN: "2"}), ""),
        (pod(**{MAX: "50%"}), ""),
        (pod(**{MIN: "0"}), f'invalid value <"0"> for {MIN}, it must be a positive integer'),
        (pod(**{MAX: "-1"}), f'invalid value <"-1"> for {MAX}, it must be a positive integer'),
        (pod(**{MAX: "100%"}), f'invalid value <"100%"> for {MAX}, it must be a valid percentage which between 1% ~ 99%'),
        (pod(**{MAX: "0%"}), f'invalid value <"0%"> for {MAX}, it must be a valid percentage which between 1% ~ 99%'),
        (pod(**{MIN: "many"}), f'invalid value strconv.Atoi: parsing "many": invalid syntax for {MIN}'),
        (pod(**{MIN: "1", MAX: "1"}), f"not allow configure multiple annotations <[{MIN} {MAX}]> at same time"),
        # Only the first bad value is reported.
        (pod(**{MIN: "0", MAX: "0"}), f'invalid value <"0"> for {MIN}, it must be a positive integer'),
        (pod("default-scheduler", **{MIN: "0"}), ""),
    ],
)
def test_pod_job_disruption_budget(p: dict[str, Any], refusal: str) -> None:
    assert validate_pod.validate(p, ("volcano",)) == refusal


def test_routes_refuse_with_the_rules_message_and_validation_off_admits() -> None:
    handlers = review.Handlers(lambda name: None, lambda: [], "volcano")
    request = {"uid": "u1", "operation": "CREATE", "object": flows(("a", ["a"]))}
    assert handlers.routes()["/jobflows/validate"](request) == {"uid": "u1", "allowed": False, "status": {"message": "jobflow Flow is not DAG", "code": 400, "reason": "BadRequest"}}
    assert handlers.routes()["/podgroups/validate"]({"uid": "u2", "operation": "UPDATE", "object": {"spec": {"queue": "gone"}}})["allowed"]
    off = review.Handlers(lambda name: None, lambda: [], "volcano", frozenset({"validation"}))
    assert off.routes()["/jobflows/validate"](request)["allowed"]
