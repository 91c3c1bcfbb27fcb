"""One page of a list read from a watch cache snapshot (k8s Cacher.GetList after the cache answered)."""

from __future__ import annotations

import bisect

from .. import continue_token
from ..interface import ListOptions, ListResult, Object, Predicate
from .watch_cache import Snapshot


def list_page(
    snapshot: Snapshot, revision: int, key_prefix: str, start_key: str, opts: ListOptions, limit: int
) -> ListResult:
    """The objects under `key_prefix` from `start_key` on that the predicate selects, at most `limit` of
    them (0 or less: all). A page that stops early carries the token of the next one, at the same
    `revision`."""
    first, end = snapshot.range(key_prefix)
    if start_key > key_prefix:
        first = bisect.bisect_left(snapshot.keys, start_key, first, end)
    predicate = opts.predicate
    objects = snapshot.objects
    if limit <= 0:  # computeListLimit: none, or one of 0 or less, lists everything
        selected = objects[first:end]  # in key order, as the store lists
        return ListResult(selected if predicate is None else [o for o in selected if predicate(o)], revision)
    items, last = _select(objects, first, end, limit, predicate)
    result = ListResult(items, revision)
    if len(items) >= limit and last < end - 1:
        # As upstream: the next page starts right after the last key returned, and the count of what is
        # left is only given when nothing filters (PrepareContinueToken).
        result.continue_token = continue_token.encode(snapshot.keys[last] + "\x00", key_prefix, revision)
        if opts.predicate_empty:
            result.remaining_item_count = (end - first) - limit
    return result


def _select(
    objects: list[Object], first: int, end: int, limit: int, predicate: Predicate | None
) -> tuple[list[Object], int]:
    """Up to `limit` selected objects from position `first`, and the position of the last one looked at."""
    if predicate is None:
        stop = min(end, first + limit)
        return objects[first:stop], stop - 1
    items: list[Object] = []
    for position in range(first, end):
        obj = objects[position]
        if predicate(obj):
            items.append(obj)
            if len(items) >= limit:
                return items, position
    return items, end - 1
