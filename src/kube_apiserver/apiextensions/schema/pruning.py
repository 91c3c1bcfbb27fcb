"""Pruning of unknown fields (pkg/apiserver/schema/pruning/algorithm.go, options.go).

Fields a structural schema does not specify are removed in place, except under
``x-kubernetes-preserve-unknown-fields`` and except ``apiVersion``/``kind``/``metadata`` of
embedded resources and of the resource root (ObjectMeta has its own coercion, objectmeta.py).
The pruned paths come back sorted, in upstream's notation (``spec.foo``, ``items[1].bar``),
for the ``unknown field "spec.foo"`` warnings and fieldValidation=Strict errors.
"""

from __future__ import annotations

from typing import Any

from .structural import Structural

META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


def as_resource_root(s: Structural | None) -> Structural:
    """The schema with ``x-kubernetes-embedded-resource`` forced on, as upstream does at the root."""
    if s is None:
        return Structural(x_embedded_resource=True)
    if s.x_embedded_resource:
        return s
    root = s.cache.get("resource_root")
    if root is None:
        root = s.clone()
        root.x_embedded_resource = True
        s.cache["resource_root"] = root
    return root


def prune(obj: Any, s: Structural | None, is_resource_root: bool = True) -> list[str]:
    """``PruneWithOptions`` with path tracking: removes unknown fields, returns their paths."""
    if is_resource_root:
        s = as_resource_root(s)
    found: list[str] = []
    _prune(obj, s, "", found)
    found.sort()
    return found


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _prune(x: Any, s: Structural | None, path: str, found: list[str]) -> None:
    if s is not None and s.x_preserve_unknown_fields:
        _skip_prune(x, s, path, found)
        return
    if isinstance(x, dict):
        if s is None:
            found.extend(_join(path, k) for k in x)
            x.clear()
            return
        _prune_map(x, s, path, found)
    elif isinstance(x, list):
        items = s.items if s is not None else None
        for i, v in enumerate(x):
            if isinstance(v, dict | list):
                _prune(v, items, f"{path}[{i}]", found)


def _prune_map(x: dict[str, Any], s: Structural, path: str, found: list[str]) -> None:
    props = s.properties or {}
    additional = s.additional_properties
    embedded = s.x_embedded_resource
    unknown: list[str] | None = None
    for k, v in x.items():
        if embedded and k in META_FIELDS:
            continue
        prop = props.get(k)
        if prop is not None:
            if isinstance(v, dict | list):
                _prune(v, prop, _join(path, k), found)
        elif additional is not None:
            if isinstance(v, dict | list):
                _prune(v, additional.structural, _join(path, k), found)
        else:
            if unknown is None:
                unknown = []
            unknown.append(k)
    for k in unknown or ():
        # upstream drops unknown apiVersion/kind/metadata at the top silently
        if k not in META_FIELDS or path:
            found.append(_join(path, k))
        del x[k]


def _skip_prune(x: Any, s: Structural | None, path: str, found: list[str]) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = s.properties or {}
        additional = s.additional_properties
        for k, v in x.items():
            if s.x_embedded_resource and k in META_FIELDS:
                continue
            prop = props.get(k)
            if prop is not None:
                _prune(v, prop, _join(path, k), found)
            elif additional is not None:
                _prune(v, additional.structural, _join(path, k), found)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _skip_prune(v, s.items, f"{path}[{i}]", found)
