"""How many seats a request takes (k8s.io/apiserver pkg/util/flowcontrol/request: width.go,
list_work_estimator.go): one, but a list (or a watch asking for its initial events) one per 100 objects it
will go through, from the stored object count, at most the level's max seats and never more than 10."""

from __future__ import annotations

import math
from collections.abc import Callable

MINIMUM_SEATS = 1
MAXIMUM_LIST_SEATS_LIMIT = 10
OBJECTS_PER_SEAT = 100.0
MAX_SEATS_PERCENT = 0.15  # priorityLevelMaxSeatsPercent

# (api group, resource) -> the stored object count, None when it is not known
ObjectCount = Callable[[str, str], int | None]


def level_max_seats(concurrency_limit: int, hand_size: int) -> int:
    """What one request of a queuing level may take: 15% of its limit, at most its limit over its hand size."""
    return max(1, min(math.ceil(concurrency_limit * MAX_SEATS_PERCENT), concurrency_limit // hand_size))


def _from_storage(query: dict[str, list[str]]) -> bool:
    """shouldListFromStorage: continuations and exact resourceVersion matches bypass the watch cache."""
    resource_version = _param(query, "resourceVersion")
    match = _param(query, "resourceVersionMatch")
    limit = _param(query, "limit")
    legacy_exact = limit not in ("", "0") and not match and resource_version not in ("", "0")
    return bool(_param(query, "continue")) or (bool(match) and match != "NotOlderThan") or legacy_exact


def _param(query: dict[str, list[str]], name: str) -> str:
    values = query.get(name)
    return values[0] if values else ""


def list_seats(
    verb: str, api_group: str, resource: str, query: dict[str, list[str]], level_max: int, count: ObjectCount
) -> int:
    """listWorkEstimator.estimate, for a list or a watch; every other request takes MINIMUM_SEATS."""
    if verb not in ("list", "watch"):
        return MINIMUM_SEATS
    max_seats = level_max if 0 < level_max <= MAXIMUM_LIST_SEATS_LIMIT else MAXIMUM_LIST_SEATS_LIMIT
    if verb == "watch" and _param(query, "sendInitialEvents") != "true":
        return MINIMUM_SEATS
    try:
        limit = int(_param(query, "limit") or 0)
    except ValueError:
        return max_seats  # destined to fail validation: as upstream, the most it could cost
    stored = count(api_group, resource)
    if stored is None or stored < 0:
        return MINIMUM_SEATS if stored is None else max_seats
    limit = limit if 0 < limit < stored else stored
    if verb == "watch" or not _from_storage(query):
        objects = stored  # the watch cache goes through all of them
    elif _param(query, "labelSelector") or _param(query, "fieldSelector"):
        objects = stored + limit
    else:
        objects = 2 * limit
    return min(max(math.ceil(objects / OBJECTS_PER_SEAT), MINIMUM_SEATS), max_seats)
