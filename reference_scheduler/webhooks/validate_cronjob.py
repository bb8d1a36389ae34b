"""Volcano's CronJob rules, in its words: a schedule that parses as a standard cron expression and
carries no TZ of its own, a time zone that names one of the IANA database, and a name short enough
for the Jobs' suffix.

Upstream: pkg/webhooks/admission/cronjobs/validate/admit_cronjob.go (validateCronjobSpec,
validateCronJobName). Each rule adds its message to the one answer, as upstream concatenates them.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from reference_scheduler.controllers.cronjob import schedule as cron

# A Job's name is the CronJob's and "-" and up to ten digits of minutes: 52 + 11 = 63.
MAX_NAME = 52
_ZONE_PART = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")
_QUALIFIED = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _spec_messages(spec: Mapping[str, Any]) -> str:
    msg = ""
    schedule = str(spec.get("schedule") or "")
    if not schedule:
        msg += " schedule is required, but got empty"
    elif "TZ" in schedule:
        msg += " schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field"
    else:
        try:
            cron.parse_standard(schedule)
        except cron.ScheduleError:
            msg += "schedule is not a valid cron expression"
    if "timeZone" in spec and spec["timeZone"] is not None:
        zone = str(spec["timeZone"])
        if not zone:
            msg += " timeZone must be nil or non-empty string, got empty string"
        else:
            for part in zone.split("/"):
                if part in (".", "..") or part.startswith("-") or not _ZONE_PART.match(part):
                    msg += " unknown timeZone"
            if zone.lower() == "local":
                msg += " timeZone can't be Local, and must be defined in https://www.iana.org/time-zones"
            else:
                try:
                    cron.load_location(zone)
                except cron.ScheduleError:
                    msg += " invalid timeZone"
    return msg


def _name_message(name: str) -> str:
    if len(name) > MAX_NAME:
        return f"cronJob name must be no more than {MAX_NAME} characters to accommodate job name suffix (max 63 total)"
    if len(name) > 63 or not _QUALIFIED.match(name):
        return f'invalid cronJob name "{name}": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character'
    return ""


def validate(cronjob: Mapping[str, Any], operation: str) -> str:
    """The refusal message ("" when admitted). On CREATE the message is trimmed, on UPDATE it is
    the error as upstream returns it (leading space kept)."""
    message = _spec_messages(cronjob.get("spec") or {}) + _name_message(str((cronjob.get("metadata") or {}).get("name") or ""))
    return message.strip() if operation == "CREATE" else message
