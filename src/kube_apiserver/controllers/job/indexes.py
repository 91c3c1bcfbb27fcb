"""Completion indexes of Indexed Jobs (pkg/controller/job/indexed_job_utils.go): the index a pod carries
in its annotation, and the interval text of status.completedIndexes ("1,3-5")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Object = dict[str, Any]
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
UNKNOWN_INDEX = -1


def pod_index(pod: Object) -> int:
    """getCompletionIndex: the annotation's non-negative int, or UNKNOWN_INDEX."""
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX)
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() or len(value) > 9:
        return UNKNOWN_INDEX
    return int(value)


def valid_index(pod: Object, completions: int) -> int:
    """The pod's index when it is within [0, completions), else UNKNOWN_INDEX."""
    index = pod_index(pod)
    return index if 0 <= index < completions else UNKNOWN_INDEX


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """The indexes an interval list names, those below `completions`; a malformed part is skipped (the
    status validation rejects it when written, so only an old status could carry one)."""
    found: set[int] = set()
    for part in (text or "").split(","):
        low, _, high = part.partition("-")
        if not (low.isdigit() and (not high or high.isdigit())):
            continue
        first, last = int(low), int(high) if high else int(low)
        found.update(range(first, min(last, completions - 1) + 1))
    return found


def format_indexes(indexes: Iterable[int]) -> str:
    """Sorted indexes as the intervals status.completedIndexes holds: "0,2-4"."""
    parts: list[str] = []
    ordered = sorted(set(indexes))
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        low, high = ordered[start], ordered[end]
        parts.append(str(low) if low == high else f"{low}-{high}")
        start = end + 1
    return ",".join(parts)
