"""CronJob time zones: Go's time.LoadLocation against the IANA database this machine has, and
validateTimeZone (pkg/apis/batch/validation)."""

from __future__ import annotations

import re
import zoneinfo

from ...apimachinery import field

# https://data.iana.org/time-zones/theory.html#naming, with 0-9 and + tolerated for legacy names.
_COMPONENT = re.compile(r"[A-Za-z.\-_0-9+]{1,14}").fullmatch
EXPLICIT = "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"


def load_location_error(name: str) -> str | None:
    """None when time.LoadLocation(name) succeeds, else its error text."""
    if name in ("", "UTC", "Local"):
        return None
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {name}"
    return None


def validate_time_zone(time_zone: str | None, path: field.Path) -> field.ErrorList:
    if time_zone is None:
        return []
    if not time_zone:
        return [field.invalid(path, time_zone, "timeZone must be nil or non-empty string")]
    for part in time_zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _COMPONENT(part):
            return [field.invalid(path, time_zone, f"unknown time zone {time_zone}")]
    errs: field.ErrorList = []
    if time_zone.lower() == "local":
        errs.append(field.invalid(path, time_zone, EXPLICIT))
    why = load_location_error(time_zone)
    if why is not None:
        errs.append(field.invalid(path, time_zone, why))
    return errs
