"""Uniqueness of ``x-kubernetes-list-type: set`` and ``map`` lists (pkg/apiserver/schema/listtype).

Each repeated element (set) or repeated key (map) is reported once, at its first repetition, as
``Duplicate value``. Scalars compare as Go interface values do (``1`` and ``1.0`` differ),
compound values by their JSON encoding (where they do not).
"""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path, go_json
from .derived import has_list_types
from .structural import Structural

_UNSPECIFIED = ("unspecified",)  # a missing key: distinct from every JSON value


def validate_list_sets_and_maps(path: Path | None, s: Structural | None, obj: dict[str, Any] | None) -> ErrorList:
    """``ValidateListSetsAndMaps`` for an object and its schema."""
    if s is None or obj is None or not has_list_types(s):
        return []
    errs: ErrorList = []
    additional = s.additional_properties.structural if s.additional_properties is not None else None
    if additional is not None and has_list_types(additional):
        for k, v in obj.items():
            errs += _value(_key(path, k), additional, v)
    if s.properties is not None:
        for k, v in obj.items():
            sub = s.properties.get(k)
            if sub is not None and has_list_types(sub):
                errs += _value(field.child_of(path, k), sub, v)
    return errs


def _key(path: Path | None, key: str) -> Path:
    return path.key(key) if path is not None else field._node("", key, None)


def _value(path: Path, s: Structural, obj: Any) -> ErrorList:
    if not has_list_types(s):
        return []
    if isinstance(obj, list):
        return _array(path, s, obj)
    if isinstance(obj, dict):
        return validate_list_sets_and_maps(path, s, obj)
    return []


def _array(path: Path, s: Structural, obj: list[Any]) -> ErrorList:
    errs: ErrorList = []
    if s.x_list_type == "set":
        errs += [field.duplicate(path.index(i), obj[i]) for i in non_unique(obj)]
    elif s.x_list_type == "map":
        errs += _list_map(path, s, obj)
    if s.items is not None and has_list_types(s.items):
        for i, item in enumerate(obj):
            errs += _value(path.index(i), s.items, item)
    return errs


def identity(x: Any) -> Any:
    """A hashable identity for a JSON value with Go's equality of interface values."""
    if isinstance(x, dict | list):
        return ("json", go_json(x))
    if x is _UNSPECIFIED:
        return x
    return (type(x).__name__, x)


def non_unique(items: list[Any]) -> list[int]:
    """Indices of the first repetition of each repeated element (``validateListSet``)."""
    if len(items) <= 1:
        return []
    seen: dict[Any, int] = {}
    result = []
    for i, x in enumerate(items):
        key = identity(x)
        times = seen.get(key, 0)
        if times == 1:
            result.append(i)
        seen[key] = times + 1
    return result


def _list_map(path: Path, s: Structural, obj: list[Any]) -> ErrorList:
    for i, x in enumerate(obj):
        if x is not None and not isinstance(x, dict):
            return [field.invalid(path.index(i), x, "must be an object for an array of list-type map")]
    if len(obj) <= 1:
        return []
    key_fields = s.x_list_map_keys or []
    if len(key_fields) == 1:
        name = key_fields[0]
        keys = [_UNSPECIFIED if x is None or name not in x else x[name] for x in obj]
        return [field.duplicate(path.index(i), {} if keys[i] is _UNSPECIFIED else {name: keys[i]})
                for i in non_unique(keys)]
    compound = [{k: x[k] for k in key_fields if k in x} if x is not None else {} for x in obj]
    return [field.duplicate(path.index(i), compound[i]) for i in non_unique(compound)]
