"""The reference webhook's CronJob rules (webhooks/validate_cronjob.py), in Volcano's words
(admit_cronjob.go): the schedule, the time zone and the name's length; every problem reported."""

from __future__ import annotations

from typing import Any

import pytest

from reference_scheduler.webhooks import validate_cronjob


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
