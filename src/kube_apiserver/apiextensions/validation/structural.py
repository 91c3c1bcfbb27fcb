"""The parts of CRD validation that upstream delegates to apiserver/schema: NewStructural,
ValidateStructural, defaulting.ValidateDefaults, PruneDefaults and CEL compilation, all provided by
kube_apiserver.apiextensions.schema."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery.field import ErrorList, Path
from .. import schema as structural

Object = dict[str, Any]


def new_structural(schema: Object | None) -> Any:
    """NewStructural; raises ValueError with upstream's message."""
    return structural.new_structural(schema) if schema is not None else None


def structural_error(schema: Object | None) -> str | None:
    """Why NewStructural fails for schema (None if it does not)."""
    try:
        new_structural(schema)
    except ValueError as err:
        return str(err)
    return None


def validate_structural(schema: Object, path: Path | None) -> ErrorList:
    """ValidateStructural on a schema NewStructural accepts."""
    return list(structural.validate_structural(schema, path))


def is_non_structural(schema: Object | None) -> bool:
    """schemaIsNonStructural (for ratcheting an update)."""
    if schema is None:
        return False
    if structural_error(schema) is not None:
        return True
    return bool(validate_structural(schema, None))


def validate_defaults(schema: Object, path: Path, require_pruned_defaults: bool) -> ErrorList:
    """ValidateDefaults(ctx, path, structural, isResourceRoot=true, requirePrunedDefaults)."""
    return list(structural.validate_defaults(path, new_structural(schema), True, require_pruned_defaults))


def schema_has_unpruned_defaults(schema: Object | None) -> bool:
    """schemaHasUnprunedDefaults: whether pruning the defaults of a valid structural schema changes them."""
    if schema is None or structural_error(schema) is not None:
        return False
    if validate_structural(schema, None):
        return False
    try:
        return bool(structural.prune_defaults(copy.deepcopy(new_structural(schema))))  # True: a default changed
    except ValueError:
        return False


def compile_node(schema: Object, rules: list[Object], is_root: bool = False) -> list[Any] | None:
    """The CompilationResults of a node's rules (error, error_type, uses_old_self, max_cost,
    max_cardinality, message_program, message_error, message_max_cost)."""
    results = list(structural.compile_node(new_structural(schema), None, is_root) or [])
    return results if len(results) == len(rules) else None
