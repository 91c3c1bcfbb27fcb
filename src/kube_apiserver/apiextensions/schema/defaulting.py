"""Defaulting (pkg/apiserver/schema/defaulting: algorithm.go, prunenulls.go, prune.go).

``default`` fills in missing fields (and non-nullable nulls) from the schema's ``default`` values,
deep-copied. ``prune_non_nullable_nulls_without_defaults`` runs first on decoding and removes
nulls the schema forbids and cannot default. ``prune_defaults`` prunes the default values
themselves, as the CRD handler does before serving.
"""

from __future__ import annotations

from typing import Any

from .derived import defaulted_properties, has_defaults
from .structural import Structural


def deep_copy_json(value: Any) -> Any:
    """A deep copy of a decoded-JSON value (``runtime.DeepCopyJSONValue``)."""
    if isinstance(value, dict):
        return {k: deep_copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy_json(v) for v in value]
    return value


def _non_nullable_null(x: Any, s: Structural | None) -> bool:
    return x is None and s is not None and not s.nullable


def default(x: Any, s: Structural | None) -> None:
    """``Default``: apply the schema's defaults to ``x`` in place."""
    if s is None or not has_defaults(s):
        return
    if isinstance(x, dict):
        _default_map(x, s)
    elif isinstance(x, list):
        items = s.items
        for i, v in enumerate(x):
            if _non_nullable_null(v, items):
                assert items is not None
                x[i] = v = deep_copy_json(items.default)
            default(v, items)


def _default_map(x: dict[str, Any], s: Structural) -> None:
    props = s.properties
    for k, prop in defaulted_properties(s):
        if k not in x or _non_nullable_null(x[k], prop):
            x[k] = deep_copy_json(prop.default)
    additional = s.additional_properties.structural if s.additional_properties is not None else None
    if not props and additional is None:
        return
    for k, v in x.items():
        prop = props.get(k) if props else None
        if prop is not None:
            if isinstance(v, dict | list):
                default(v, prop)
        elif s.additional_properties is not None:
            if _non_nullable_null(v, additional):
                assert additional is not None
                x[k] = v = deep_copy_json(additional.default)
            default(v, additional)


def prune_non_nullable_nulls_without_defaults(x: Any, s: Structural | None) -> None:
    """``PruneNonNullableNullsWithoutDefaults``: drop nulls that are neither allowed nor defaulted."""
    if isinstance(x, dict):
        props = s.properties if s is not None else None
        ap = s.additional_properties if s is not None else None
        additional = ap.structural if ap is not None else None
        drop = None
        for k, v in x.items():
            if v is not None and type(v) is not dict and type(v) is not list:
                continue
            schema = props.get(k) if props else None
            if schema is None:
                schema = additional
            if v is None:
                if schema is not None and not schema.nullable and schema.default is None:
                    drop = [k] if drop is None else [*drop, k]
            else:
                prune_non_nullable_nulls_without_defaults(v, schema)
        for k in drop or ():
            del x[k]
    elif isinstance(x, list):
        items = s.items if s is not None else None
        for v in x:
            if type(v) is dict or type(v) is list:
                prune_non_nullable_nulls_without_defaults(v, items)
