"""Cron schedules as CronJobs validate them: github.com/robfig/cron/v3's ParseStandard (five fields,
minute hour day-of-month month day-of-week, or a descriptor: @yearly, @monthly, @weekly, @daily,
@hourly, @every <duration>), with its exact error texts. Only parsing: nothing here runs schedules
(that is kube-controller-manager's cronjob controller)."""

from __future__ import annotations

from dataclasses import dataclass

from ...apimachinery.goduration import parse_duration_ns
from .timezone import load_location_error


@dataclass(frozen=True)
class Bounds:
    low: int
    high: int
    names: tuple[str, ...] = ()  # names[i] is low + i


MINUTES, HOURS = Bounds(0, 59), Bounds(0, 23)
DAYS_OF_MONTH = Bounds(1, 31)
MONTHS = Bounds(1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
DAYS_OF_WEEK = Bounds(0, 6, ("sun", "mon", "tue", "wed", "thu", "fri", "sat"))
FIELDS = (MINUTES, HOURS, DAYS_OF_MONTH, MONTHS, DAYS_OF_WEEK)
DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
EVERY = "@every "


class CronError(ValueError):
    pass


def parse_standard(spec: str) -> None:
    """cron.ParseStandard: raises CronError with robfig/cron's message when `spec` is not a schedule."""
    if not spec:
        raise CronError("empty spec string")
    spec = _strip_time_zone(spec)
    if spec.startswith("@"):
        _parse_descriptor(spec)
        return
    fields = spec.split()
    if len(fields) != len(FIELDS):
        raise CronError(f"expected exactly {len(FIELDS)} fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, bounds in zip(fields, FIELDS, strict=True):
        for expr in (part for part in text.split(",") if part):
            _parse_range(expr, bounds)


def _strip_time_zone(spec: str) -> str:
    """A leading TZ=<zone> or CRON_TZ=<zone> names the schedule's location."""
    if not (spec.startswith("TZ=") or spec.startswith("CRON_TZ=")):
        return spec
    space, equals = spec.find(" "), spec.find("=")
    zone = spec[equals + 1:space] if space >= 0 else spec[equals + 1:]
    why = load_location_error(zone)
    if why is not None or space < 0:
        raise CronError(f"provided bad location {zone}: {why or 'no schedule after the location'}")
    return spec[space:].strip()


def _parse_descriptor(spec: str) -> None:
    if spec in DESCRIPTORS:
        return
    if spec.startswith(EVERY):
        try:
            parse_duration_ns(spec[len(EVERY):])
        except ValueError as err:
            raise CronError(f"failed to parse duration {spec}: {err}") from None
        return
    raise CronError(f"unrecognized descriptor: {spec}")


def _parse_range(expr: str, bounds: Bounds) -> None:
    """getRange: N, N-M, *, ? each optionally followed by /step."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    if low_and_high[0] in ("*", "?"):
        start, end = bounds.low, bounds.high
    else:
        start = _int_or_name(low_and_high[0], bounds)
        if len(low_and_high) > 2:
            raise CronError(f"too many hyphens: {expr}")
        end = _int_or_name(low_and_high[1], bounds) if len(low_and_high) == 2 else start
    step = 1
    if len(range_and_step) == 2:
        step = _non_negative_int(range_and_step[1])
        if len(low_and_high) == 1:
            end = bounds.high  # "N/step" means "N-max/step"
    elif len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    _check_range(expr, start, end, step, bounds)


def _check_range(expr: str, start: int, end: int, step: int, bounds: Bounds) -> None:
    if start < bounds.low:
        raise CronError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise CronError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")


def _int_or_name(text: str, bounds: Bounds) -> int:
    lowered = text.lower()
    if lowered in bounds.names:
        return bounds.low + bounds.names.index(lowered)
    return _non_negative_int(text)


def _non_negative_int(text: str) -> int:
    """mustParseInt: strconv.Atoi, then no negative numbers."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not (digits.isascii() and digits.isdigit()):
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if not -(1 << 63) <= value < 1 << 63:
        raise CronError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": value out of range')
    if value < 0:
        raise CronError(f"negative number ({value}) not allowed: {text}")
    return value
