"""Facts about a schema subtree, computed once per node and kept in ``Structural.cache``, so that
the per-write walks (defaulting, ObjectMeta and list-type checks) skip subtrees with nothing to do.
The cache assumes the schema's shape does not change after first use."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .structural import Structural


def _children(s: Structural) -> Iterator[Structural]:
    if s.items is not None:
        yield s.items
    if s.properties:
        yield from s.properties.values()
    if s.additional_properties is not None and s.additional_properties.structural is not None:
        yield s.additional_properties.structural


def _subtree_has(key: str, test: Callable[[Structural], bool]) -> Callable[[Structural | None], bool]:
    def check(s: Structural | None) -> bool:
        if s is None:
            return False
        found = s.cache.get(key)
        if found is None:
            found = test(s) or any(check(c) for c in _children(s))
            s.cache[key] = found
        return found
    return check


has_defaults = _subtree_has("has_defaults", lambda s: s.default is not None)
has_embedded = _subtree_has("has_embedded", lambda s: s.x_embedded_resource)
has_list_types = _subtree_has("has_list_types", lambda s: s.x_list_type in ("set", "map"))


def defaulted_properties(s: Structural) -> tuple[tuple[str, Structural], ...]:
    """The properties of ``s`` that have a default."""
    found = s.cache.get("defaulted")
    if found is None:
        found = tuple((k, p) for k, p in (s.properties or {}).items() if p.default is not None)
        s.cache["defaulted"] = found
    return found
