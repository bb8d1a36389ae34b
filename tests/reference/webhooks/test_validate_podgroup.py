"""The reference webhook's PodGroup rule (webhooks/validate_podgroup.py), in Volcano's words
(validate_podgroup.go): a PodGroup goes only to a queue that exists and is Open."""

from __future__ import annotations

import pytest

from reference_scheduler.webhooks import validate_podgroup

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
