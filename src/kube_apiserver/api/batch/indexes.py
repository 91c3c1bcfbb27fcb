"""Index interval lists of Indexed Jobs ("1,3-5,7"): successPolicy.rules[].succeededIndexes,
status.completedIndexes and status.failedIndexes, parsed as pkg/apis/batch/validation does."""

from __future__ import annotations


class IndexesError(ValueError):
    pass


def _atoi(text: str) -> int | None:
    digits = text[1:] if text[:1] in ("+", "-") else text
    return int(text) if digits and digits.isascii() and digits.isdigit() else None


def parse_interval(text: str, completions: int) -> tuple[int, int]:
    """parseIndexInterval: "x" or "x-y", each below completions, x < y."""
    limits = text.split("-")
    if len(limits) > 2:
        raise IndexesError(f'the fragment "{text}" violates the requirement that an index interval can have at '
                           f"most two parts separated by '-'")
    values = []
    for limit in limits:
        value = _atoi(limit)
        if value is None:
            raise IndexesError(f'cannot convert string to integer for index: "{limit}"')
        if value >= completions:
            raise IndexesError(f'too large index: "{limit}"')
        values.append(value)
    if len(values) == 2 and values[0] >= values[1]:
        raise IndexesError(f"non-increasing order, previous: {values[0]}, current: {values[1]}")
    return values[0], values[-1]


def count_indexes(text: str, completions: int) -> int:
    """validateIndexesFormat: the number of indexes listed; raises IndexesError."""
    if not text:
        return 0
    total, last = 0, None
    for interval in text.split(","):
        low, high = parse_interval(interval, completions)
        if last is not None and last >= low:
            raise IndexesError(f"non-increasing order, previous: {last}, current: {low}")
        total += high - low + 1
        last = high
    return total


def _parsed(intervals: list[str], pos: int, completions: int) -> tuple[int, int] | None:
    try:
        return parse_interval(intervals[pos], completions)
    except IndexesError:
        return None


def overlap_error(completed: str, failed: str, completions: int) -> str | None:
    """validateFailedIndexesNotOverlapCompleted: the first index in both lists, as an error text."""
    if not completed or not failed:
        return None
    done, bad = completed.split(","), failed.split(",")
    i = j = 0
    done_range, bad_range = _parsed(done, 0, completions), _parsed(bad, 0, completions)
    while i < len(done) and j < len(bad):
        if done_range is None:
            i += 1
            done_range = _parsed(done, i, completions) if i < len(done) else None
        elif bad_range is None:
            j += 1
            bad_range = _parsed(bad, j, completions) if j < len(bad) else None
        elif done_range[0] <= bad_range[1] and bad_range[0] <= done_range[1]:
            return f"failedIndexes and completedIndexes overlap at index: {max(done_range[0], bad_range[0])}"
        elif done_range[0] <= bad_range[0]:
            i += 1
            done_range = _parsed(done, i, completions) if i < len(done) else done_range
        else:
            j += 1
            bad_range = _parsed(bad, j, completions) if j < len(bad) else bad_range
    return None
