"""Which nodes a HyperNode member's selector names (reference_scheduler/api/hypernode_members.py):
exactMatch, regexMatch (found anywhere in the name, as Go's MatchString) and labelMatch."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.api import hypernode_members

LABELS = {"a-0": {"rack": "a"}, "a-1": {"rack": "a", "gpu": "yes"}, "b-0": {"rack": "b"}}


@pytest.mark.parametrize(("selector", "members"), [
    ({"exactMatch": {"name": "a-0"}}, {"a-0"}),
    ({"exactMatch": {"name": ""}}, set()),
    ({"regexMatch": {"pattern": "^a-"}}, {"a-0", "a-1"}),
    ({"regexMatch": {"pattern": "-0"}}, {"a-0", "b-0"}),  # found anywhere in the name, as Go's MatchString
    ({"regexMatch": {"pattern": "("}}, set()),
    ({"labelMatch": {"matchLabels": {"rack": "a"}}}, {"a-0", "a-1"}),
    ({"labelMatch": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}, {"a-1"}),
    ({"labelMatch": {"matchExpressions": [{"key": "rack", "operator": "NotIn", "values": ["a"]}]}}, {"b-0"}),
    ({"labelMatch": {}}, set()),
    ({"exactMatch": {"name": "b-0"}, "regexMatch": {"pattern": "^a-0$"}}, {"a-0", "b-0"}),
])
def test_members_of_a_node_selector(selector: dict[str, Any], members: set[str]) -> None:
    assert hypernode_members.members_of(selector, LABELS) == members
