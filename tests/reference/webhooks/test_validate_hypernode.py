"""The reference webhook's HyperNode rules (webhooks/validate_hypernode.py), in Volcano's words
(admit_hypernode.go): members there must be, each with a selector that names nodes."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.webhooks import validate_hypernode


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
