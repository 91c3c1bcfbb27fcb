"""equality.Semantic for plain JSON objects: Go's decoded structs make an empty list or map, a null and
an absent field the same value, so comparisons here must too."""

from __future__ import annotations

from typing import Any


def semantic(value: Any) -> Any:
    """`value` with empty lists, empty maps and nulls dropped from every map, for comparing."""
    if isinstance(value, dict):
        return {k: semantic(v) for k, v in value.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [semantic(v) for v in value]
    return value
