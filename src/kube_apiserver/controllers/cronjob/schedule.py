"""Cron schedules as the cronjob controller runs them: github.com/robfig/cron/v3's standard parser
(validated first by api.batch.cron, whose errors are robfig's texts) into the set of minutes, hours,
days, months and weekdays each field allows, and `next`, the first time strictly after a given one the
schedule fires, in the schedule's time zone. `@every <duration>` fires that long after the given time."""

from __future__ import annotations

import datetime
import zoneinfo
from dataclasses import dataclass

from ...api.batch.cron import (
    DAYS_OF_MONTH,
    DAYS_OF_WEEK,
    FIELDS,
    HOURS,
    MINUTES,
    MONTHS,
    Bounds,
    parse_standard,
)
from ...apimachinery.goduration import parse_duration_ns

UTC = datetime.UTC
DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
# robfig gives up looking for a time that matches after five years (a "30 2 31 2 *" never does).
SEARCH_YEARS = 5


@dataclass(frozen=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    day_star: bool  # the day of month or of week was `*` (or `?`): both must then match, else either
    location: datetime.tzinfo = UTC
    every: float = 0.0  # @every: a constant delay in seconds instead of the fields

    def next(self, after: datetime.datetime) -> datetime.datetime | None:
        """The first time strictly after `after` the schedule fires; None when none within SEARCH_YEARS."""
        if self.every:
            return after.replace(microsecond=0) + datetime.timedelta(seconds=int(self.every))
        local = after.astimezone(self.location).replace(second=0, microsecond=0, tzinfo=None)
        t = local + datetime.timedelta(minutes=1)
        limit = t.year + SEARCH_YEARS
        while t.year <= limit:
            if t.month not in self.months:
                t = datetime.datetime(t.year + (t.month == 12), t.month % 12 + 1, 1)
            elif not self._day_matches(t):
                t = datetime.datetime(t.year, t.month, t.day) + datetime.timedelta(days=1)
            elif t.hour not in self.hours:
                t = datetime.datetime(t.year, t.month, t.day, t.hour) + datetime.timedelta(hours=1)
            elif t.minute not in self.minutes:
                t += datetime.timedelta(minutes=1)
            else:
                return t.replace(tzinfo=self.location).astimezone(UTC)
        return None

    def _day_matches(self, t: datetime.datetime) -> bool:
        dom = t.day in self.days
        dow = (t.isoweekday() % 7) in self.weekdays
        return (dom and dow) if self.day_star else (dom or dow)


def _field(text: str, bounds: Bounds) -> tuple[frozenset[int], bool]:
    """The values a field allows, and whether it is a bare `*`/`?` (robfig's starBit)."""
    values: set[int] = set()
    star = False
    for expr in (part for part in text.split(",") if part):
        range_and_step = expr.split("/")
        low_and_high = range_and_step[0].split("-")
        step = int(range_and_step[1]) if len(range_and_step) == 2 else 1
        if low_and_high[0] in ("*", "?"):
            start, end = bounds.low, bounds.high
            star = star or step == 1
        else:
            start = _value(low_and_high[0], bounds)
            end = _value(low_and_high[1], bounds) if len(low_and_high) == 2 else start
            if len(range_and_step) == 2 and len(low_and_high) == 1:
                end = bounds.high
        values.update(range(start, end + 1, step))
    return frozenset(values), star


def _value(text: str, bounds: Bounds) -> int:
    lowered = text.lower()
    return bounds.low + bounds.names.index(lowered) if lowered in bounds.names else int(text)


def parse(spec: str, time_zone: str | None = None) -> Schedule:
    """A schedule from a CronJob's spec.schedule and spec.timeZone; raises api.batch.cron.CronError (a
    ValueError) with robfig's message when the spec does not parse, zoneinfo's errors for a bad zone."""
    parse_standard(spec)
    zone = time_zone or ""
    if spec.startswith(("TZ=", "CRON_TZ=")):
        zone, _, spec = spec.partition("=")[2].partition(" ")
        spec = spec.strip()
    location: datetime.tzinfo = UTC if zone in ("", "UTC", "Local") else zoneinfo.ZoneInfo(zone)
    if spec.startswith("@every "):
        seconds = max(parse_duration_ns(spec[len("@every ") :]) / 1e9, 1.0)  # robfig's Every: at least 1 s
        return Schedule(
            frozenset(), frozenset(), frozenset(), frozenset(), frozenset(), True, location, seconds
        )
    fields = DESCRIPTORS.get(spec, spec).split()
    parsed = [_field(text, bounds) for text, bounds in zip(fields, FIELDS, strict=True)]
    (minutes, _), (hours, _), (days, dom_star), (months, _), (weekdays, dow_star) = parsed
    assert FIELDS == (MINUTES, HOURS, DAYS_OF_MONTH, MONTHS, DAYS_OF_WEEK)
    return Schedule(minutes, hours, days, months, weekdays, dom_star or dow_star, location)
