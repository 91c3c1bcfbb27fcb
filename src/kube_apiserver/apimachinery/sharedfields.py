"""One fieldsV1 tree for the many objects that hold the same one.

managedFields' fieldsV1 is a tree of {"f:name": {...}} dicts naming every field a manager set: for a
ConfigMap of ten keys, 1.7 KB of dicts decoded, a third of the whole object, and the same tree for every
object written the same way by the same manager. Go keeps it as raw JSON bytes (metav1.FieldsV1.Raw); here
the memory caches that hold decoded objects for long (the watch cache, the informers' objects) share one
tree among the objects whose trees serialize alike. Those objects are never changed in place (readers copy
first), so sharing is invisible.

The short strings nearly every object of a resource repeats (its apiVersion, kind and namespace, each
managedFields entry's manager, operation, apiVersion, fieldsType and time) are interned too: decoding makes
a string of ~55 bytes for each, every time."""

from __future__ import annotations

from collections import OrderedDict
from sys import intern
from typing import Any

import orjson

SHARED_TREES = 4096  # distinct trees remembered per cache
LARGEST_SHARED = 4096  # bytes: a larger tree is nearly always an object's own
OBJECT_STRINGS = ("apiVersion", "kind")
ENTRY_STRINGS = ("manager", "operation", "apiVersion", "fieldsType", "time")
LONGEST_INTERNED = 64  # characters: names and timestamps, not data


class FieldsV1Sharing:
    """Replaces each managedFields entry's fieldsV1 of an object by the equal tree seen before (the same
    JSON, key order included, so every object still serializes as it did). Remembers the SHARED_TREES
    trees used last."""

    __slots__ = ("size", "_trees")

    def __init__(self, size: int = SHARED_TREES):
        self.size = size
        self._trees: OrderedDict[bytes, dict[str, Any]] = OrderedDict()

    def share(self, obj: Any) -> None:
        if not isinstance(obj, dict):
            return
        _intern_values(obj, OBJECT_STRINGS)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            return
        _intern_values(meta, ("namespace",))
        entries = meta.get("managedFields")
        if not isinstance(entries, list):
            return
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            _intern_values(entry, ENTRY_STRINGS)
            fields = entry.get("fieldsV1")
            if isinstance(fields, dict) and fields:
                entry["fieldsV1"] = self._shared(fields)

    def _shared(self, fields: dict[str, Any]) -> dict[str, Any]:
        try:
            key = orjson.dumps(fields)
        except orjson.JSONEncodeError:  # not what a fieldsV1 holds: left as it is
            return fields
        if len(key) > LARGEST_SHARED:
            return fields
        trees = self._trees
        shared = trees.get(key)
        if shared is not None:
            trees.move_to_end(key)
            return shared
        trees[key] = fields
        if len(trees) > self.size:
            trees.popitem(last=False)
        return fields


def _intern_values(values: dict[str, Any], names: tuple[str, ...]) -> None:
    """The named string values of `values` replaced by their interned (equal) strings."""
    for name in names:
        value = values.get(name)
        if type(value) is str and len(value) <= LONGEST_INTERNED:
            values[name] = intern(value)
