"""Correlation of old and new values for transition rules and ratcheting
(k8s.io/apiserver/pkg/cel/common: equality.go CorrelatedObject, maplist.go MapList).

Object fields correlate by key; list items only in ``x-kubernetes-list-type: map`` lists, by
their key fields (the first old item with the same keys). An error is ratcheted when the nearest
correlated value it belongs to is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .govalues import deep_equal
from .listtype import identity
from .structural import Structural

ItemFinder = Callable[[Any], Any]


def _no_item(_: Any) -> Any:
    return None


def _key_of(keys: list[str], item: Any) -> Any:
    """MapList's key of an item: scalars only, every key present; None when it has none."""
    if not isinstance(item, dict):
        return None
    parts = []
    for name in keys:
        if name not in item:
            return None
        value = item[name]
        if not isinstance(value, bool | int | float | str):
            return None
        parts.append(identity(value))
    return tuple(parts)


def correlated_item_finder(s: Structural | None) -> Callable[[list[Any] | None], ItemFinder]:
    """For a list schema: old list -> (new item -> its correlated old item or None)."""
    keys = s.x_list_map_keys if s is not None and s.x_list_type == "map" else None
    if not keys:
        return lambda old: _no_item

    def for_old(old: list[Any] | None) -> ItemFinder:
        if not old:
            return _no_item
        index: dict[Any, Any] = {}
        for item in old:
            key = _key_of(keys, item)
            if key is not None and key not in index:
                index[key] = item

        def find(item: Any) -> Any:
            key = _key_of(keys, item)
            return index.get(key) if key is not None else None
        return find
    return for_old


class Correlation:
    """A new value and the old value it correlates with; equality computed once, on demand."""

    __slots__ = ("value", "old", "_equal")

    def __init__(self, value: Any, old: Any) -> None:
        self.value, self.old, self._equal = value, old, None

    def equal(self) -> bool:
        if self._equal is None:
            self._equal = deep_equal(self.value, self.old)
        return self._equal

    def key(self, name: str) -> Correlation | None:
        if isinstance(self.value, dict) and isinstance(self.old, dict) and name in self.value and name in self.old:
            return Correlation(self.value[name], self.old[name])
        return None

    def index(self, i: int, find: ItemFinder) -> Correlation | None:
        if isinstance(self.value, list) and isinstance(self.old, list) and i < len(self.value):
            old = find(self.value[i])
            if old is not None:
                return Correlation(self.value[i], old)
        return None


class Ratchet:
    """cel's ratchetingOptions: the current correlation and the nearest correlated parent."""

    __slots__ = ("current", "parent")

    def __init__(self, current: Correlation | None, parent: Correlation | None) -> None:
        self.current, self.parent = current, parent

    @staticmethod
    def none() -> Ratchet:
        return _NONE

    def should_ratchet(self) -> bool:
        if self.current is not None:
            return self.current.equal()
        return self.parent is not None and self.parent.equal()

    def key(self, name: str) -> Ratchet:
        if self.current is None:
            return self
        if self.parent is None and name in ("apiVersion", "kind"):
            return _NONE
        return Ratchet(self.current.key(name), self.current)

    def index(self, i: int, find: ItemFinder) -> Ratchet:
        if self.current is None:
            return self
        return Ratchet(self.current.index(i, find), self.current)

    def for_all_of(self) -> Ratchet:
        # upstream hands allOf branches only the nearest parent correlation
        return Ratchet(None, self.parent)


_NONE = Ratchet(None, None)
