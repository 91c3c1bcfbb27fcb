"""Validation ratcheting of updates (pkg/apiserver/validation/ratcheting.go, GA in 1.33).

On update, kube-apiserver validates a value against the schema only where it changed: every
error raised inside a value that correlates with an equal old value (same object key, or same
keys of a ``map`` list item) is demoted to a warning and dropped. The unchanged values are found
by walking new and old together; an error is dropped when its kube-openapi name lies in one.
"""

from __future__ import annotations

from typing import Any

from .correlation import correlated_item_finder
from .govalues import deep_equal
from .structural import new_structural

_TYPE_META = ("apiVersion", "kind")


def unchanged_names(new: Any, old: Any, schema: dict[str, Any]) -> list[str]:
    """kube-openapi names ("spec.a", "spec.l[2]") of correlated values equal to their old value."""
    found: list[str] = []
    _walk(new, old, schema, "", True, found)
    return found


def _walk(new: Any, old: Any, schema: dict[str, Any], name: str, root: bool, found: list[str]) -> None:
    if deep_equal(new, old):
        found.append(name)
        return
    if isinstance(new, dict) and isinstance(old, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for k, v in new.items():
            if (root and k in _TYPE_META) or k not in old:
                continue
            sub = props.get(k)
            if sub is None and isinstance(additional, dict):
                sub = additional
            if sub is not None:
                _walk(v, old[k], sub, f"{name}.{k}" if name else k, False, found)
    elif isinstance(new, list) and isinstance(old, list) and isinstance(schema.get("items"), dict):
        if schema.get("x-kubernetes-list-type") != "map":
            return
        find = correlated_item_finder(new_structural({k: v for k, v in schema.items() if k != "items"}))(old)
        for i, item in enumerate(new):
            old_item = find(item)
            if old_item is not None:
                _walk(item, old_item, schema["items"], f"{name}[{i}]", False, found)


def is_ratcheted(name: str, unchanged: list[str]) -> bool:
    for prefix in unchanged:
        if not prefix or name == prefix or name.startswith((prefix + ".", prefix + "[")):
            return True
    return False
