"""Checks and pruning of a schema's default values (defaulting/validation.go, prune.go,
surroundingobject.go).

A default is validated as the value it will become: inside ObjectMeta/TypeMeta it is wrapped in a
surrounding object (``{"metadata": {"labels": <default>}}``) so the metadata rules apply; elsewhere
it must be pruned already, pass the embedded-resource checks, the OpenAPI value validation and
the node's CEL rules (with and without an old value, as ratcheting would evaluate them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path, aggregate_message
from . import objectmeta
from .defaulting import deep_copy_json
from .govalues import deep_equal
from .openapi import SchemaValidator
from .pruning import as_resource_root, prune
from .structural import Structural, to_kube_openapi

RUNTIME_CEL_COST_BUDGET = 10_000_000

Accessor = Callable[[dict[str, Any]], tuple[Any, bool]]
Surrounding = Callable[[Any], tuple[dict[str, Any], Accessor]]


class SurroundingError(ValueError):
    """An accessor found a node of the wrong type (upstream's AccessorFunc error)."""


def root_object_func() -> Surrounding:
    """``NewRootObjectFunc``: the focus itself, which must be an object."""
    def build(x: Any) -> tuple[dict[str, Any], Accessor]:
        if not isinstance(x, dict):
            raise SurroundingError("object root default value must be of object type")
        return x, lambda root: (root, True)
    return build


def with_type_meta(f: Surrounding, api_version: str, kind: str) -> Surrounding:
    def build(x: Any) -> tuple[dict[str, Any], Accessor]:
        obj, acc = f(x)
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", api_version)
        return obj, acc
    return build


def child(f: Surrounding, key: str) -> Surrounding:
    """x => f({key: x})."""
    def build(x: Any) -> tuple[dict[str, Any], Accessor]:
        obj, acc = f({key: x})

        def access(root: dict[str, Any]) -> tuple[Any, bool]:
            parent, found = acc(root)
            if not found:
                return None, False
            if not isinstance(parent, dict):
                raise SurroundingError(f".{key} must be of object type")
            return (parent[key], True) if key in parent else (None, False)
        return obj, access
    return build


def index(f: Surrounding) -> Surrounding:
    """x => f([x])."""
    def build(x: Any) -> tuple[dict[str, Any], Accessor]:
        obj, acc = f([x])

        def access(root: dict[str, Any]) -> tuple[Any, bool]:
            parent, found = acc(root)
            if not found:
                return None, False
            if not isinstance(parent, list):
                raise SurroundingError("[] must be of array type")
            return (parent[0], True) if parent else (None, False)
        return obj, access
    return build


def _validation_root() -> Surrounding:
    return with_type_meta(root_object_func(), "validation/v1", "Validation")


def validate_defaults(path: Path | None, s: Structural | None, is_resource_root: bool = True,
                      require_pruned_defaults: bool = True, budget: int = RUNTIME_CEL_COST_BUDGET) -> ErrorList:
    """``ValidateDefaults``: errors of the default values under ``path`` (the schema's path).

    ``budget`` is the CEL cost budget shared by all rules run on defaults.
    """
    if is_resource_root:
        s = as_resource_root(s)
    errs, _ = _validate(path, s, s, _validation_root(), False, require_pruned_defaults, budget)
    return errs


def _validate(path: Path | None, s: Structural | None, root: Structural | None, f: Surrounding,
              inside_meta: bool, require_pruned: bool, budget: int) -> tuple[ErrorList, int]:
    if s is None:
        return [], budget
    if s.x_embedded_resource:
        inside_meta, f, root = False, _validation_root(), s
    errs: ErrorList = []
    if s.default is not None:
        check = _check_inside_meta if inside_meta else _check_plain
        errs, budget = check(path, s, root, f, require_pruned, budget)
        if budget < 0:
            return errs, budget
    # additionalProperties are not followed: defaults are forbidden there
    children: list[tuple[Path, Structural, Surrounding, bool]] = []
    if s.items is not None:
        children.append((field.child_of(path, "items"), s.items, index(f), inside_meta))
    for key, prop in (s.properties or {}).items():
        sub_meta = inside_meta or (s.x_embedded_resource and key in ("metadata", "apiVersion", "kind"))
        children.append((field.child_of(path, "properties").key(key), prop, child(f, key), sub_meta))
    for sub_path, sub, sub_f, sub_meta in children:
        sub_errs, budget = _validate(sub_path, sub, root, sub_f, sub_meta, require_pruned, budget)
        errs += sub_errs
        if budget < 0:
            break
    return errs, budget


def _check_inside_meta(path: Path | None, s: Structural, root: Structural | None, f: Surrounding,
                       require_pruned: bool, budget: int) -> tuple[ErrorList, int]:
    default_path = field.child_of(path, "default")
    obj, _ = f(deep_copy_json(s.default))
    err, _ = objectmeta.coerce(None, obj, root, True)
    if err is not None:
        return [field.invalid(default_path, s.default, f"must result in valid metadata: {err}")], budget
    meta_errs = objectmeta.validate(None, obj, root, True)
    if meta_errs:
        return [field.invalid(default_path, s.default,
                              f"must result in valid metadata: {aggregate_message(meta_errs)}")], budget
    return _check_value(default_path, s, s.default, root, budget)


def _check_plain(path: Path | None, s: Structural, root: Structural | None, f: Surrounding,
                 require_pruned: bool, budget: int) -> tuple[ErrorList, int]:
    default_path = field.child_of(path, "default")
    errs: ErrorList = []
    if require_pruned:
        pruned = deep_copy_json(s.default)
        prune(pruned, s, s.x_embedded_resource)
        if not deep_equal(pruned, s.default):
            errs.append(field.invalid(default_path, s.default, "must not have unknown fields"))
    # upstream coerces the schema's own default; a copy keeps the CRD object untouched
    value = deep_copy_json(s.default)
    err, _ = objectmeta.coerce(default_path, value, s, s.x_embedded_resource)
    if err is not None:
        return errs + [err], budget
    meta_errs = objectmeta.validate(default_path, value, s, s.x_embedded_resource)
    if meta_errs:
        return errs + meta_errs, budget
    value_errs, budget = _check_value(default_path, s, value, root, budget)
    return errs + value_errs, budget


def _check_value(default_path: Path, s: Structural, value: Any, root: Structural | None,
                 budget: int) -> tuple[ErrorList, int]:
    """OpenAPI value validation, then the node's CEL rules."""
    errs = SchemaValidator(to_kube_openapi(s), None).validate(value, default_path)
    if errs:
        return errs, budget
    from .celrules import new_rule_validator  # CEL is imported only when rules exist

    rules = new_rule_validator(s, s is root)
    if rules is None:
        return [], budget
    cel_errs, remaining = rules.validate_with_budget(value, value, default_path, budget)
    if not cel_errs:
        # ratcheting: the default must also be valid when nothing is correlated (create)
        cel_errs, without_old = rules.validate_with_budget(value, None, default_path, budget)
        remaining = min(remaining, without_old)
    return cel_errs, remaining


# --- prune.go ---------------------------------------------------------------------------


def prune_defaults(s: Structural) -> bool:
    """``PruneDefaults``: prune every default value in place; True when one changed.

    Raises ValueError ("failed to prune default value: ...") when a default cannot be placed.
    """
    return _prune_defaults(s, s, root_object_func())


def _prune_defaults(s: Structural | None, root: Structural, f: Surrounding) -> bool:
    if s is None:
        return False
    changed = False
    if s.default is not None:
        original = deep_copy_json(s.default)
        try:
            obj, acc = f(s.default)
            err, _ = objectmeta.coerce(None, obj, root, True, drop_invalid=True)
            if err is not None:
                raise SurroundingError(str(err))
            prune(obj, root, True)
            s.default = acc(obj)[0]
        except SurroundingError as err:
            raise ValueError(f"failed to prune default value: {err}") from None
        changed = not deep_equal(original, s.default)
    if s.additional_properties is not None and s.additional_properties.structural is not None:
        changed = _prune_defaults(s.additional_properties.structural, root, child(f, "*")) or changed
    if s.items is not None:
        changed = _prune_defaults(s.items, root, index(f)) or changed
    for key, prop in (s.properties or {}).items():
        changed = _prune_defaults(prop, root, child(f, key)) or changed
    return changed
