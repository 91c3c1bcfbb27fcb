"""CustomResourceDefinition schema machinery (k8s.io/apiextensions-apiserver pkg/apiserver/schema
and pkg/apiserver/validation), on plain dicts.

Building blocks, in the order a custom resource write uses them (customresource_handler.go's
unstructuredSchemaCoercer, then the strategy's Validate/ValidateUpdate)::

    s = new_structural(version_schema)                   # once per CRD version
    prune_defaults(s)                                    # once: defaults pruned like objects
    validator = SchemaValidator(version_schema)          # compiled once
    rules = new_rule_validator(s)                        # compiled once (None without rules)

    meta, found, meta_unknown = get_object_meta(obj, return_unknown=True)  # MetaDecodeError -> 400
    unknown = prune(obj, s)                              # unknown fields removed: ["spec.foo"]
    prune_non_nullable_nulls_without_defaults(obj, s)
    err, embedded_unknown = coerce(None, obj, s, False, return_unknown=True)
    set_object_meta(obj, meta) if found else None        # root metadata normalized
    default(obj, s)
    errs = validator.validate(obj)                       # or validate_update(obj, old) (ratcheting)
    errs += validate_object_meta(None, obj, s, False)    # embedded resources
    errs += validate_list_sets_and_maps(None, s, obj)
    if rules and not has_blocking_err(errs):
        errs += rules.validate(obj, old_obj)             # x-kubernetes-validations

For CRD validation: :func:`validate_structural`, :func:`validate_defaults`, :func:`compile_rules`,
:func:`valid_field_path`, :func:`prune_defaults`. Field errors are ``apimachinery.field`` errors
with upstream's messages.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...apimachinery.field import FieldError
from .celcheck import STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT, TotalCost, compile_rules
from .celcompile import CompiledRule, compile_node, valid_field_path
from .celrules import (
    PER_CALL_LIMIT,
    RUNTIME_CEL_COST_BUDGET,
    RuleValidator,
    has_x_validations,
    new_rule_validator,
)
from .defaulting import deep_copy_json, default, prune_non_nullable_nulls_without_defaults
from .defaults import prune_defaults, validate_defaults
from .formats import DEFAULT_COMPATIBILITY_VERSION, effective_format
from .listtype import validate_list_sets_and_maps
from .metadecode import MetaDecodeError
from .objectmeta import coerce, get_object_meta, set_object_meta
from .objectmeta import validate as validate_object_meta
from .openapi import SchemaValidator
from .pruning import prune
from .structural import (
    Extensions,
    Generic,
    NestedValueValidation,
    Structural,
    StructuralOrBool,
    ValidationRule,
    ValueValidation,
    new_structural,
    to_kube_openapi,
)
from .validation import ValidationOptions, validate_structural

__all__ = [
    "DEFAULT_COMPATIBILITY_VERSION", "PER_CALL_LIMIT", "RUNTIME_CEL_COST_BUDGET", "STATIC_ESTIMATED_COST_LIMIT",
    "STATIC_ESTIMATED_CRD_COST_LIMIT", "CompiledRule", "Extensions", "Generic", "MetaDecodeError",
    "NestedValueValidation", "RuleValidator", "SchemaValidator", "Structural", "StructuralOrBool", "TotalCost",
    "ValidationOptions", "ValidationRule", "ValueValidation", "coerce", "compile_node", "compile_rules",
    "deep_copy_json", "default", "effective_format", "get_object_meta", "has_blocking_err", "has_x_validations",
    "new_rule_validator", "new_structural", "prune", "prune_defaults", "prune_non_nullable_nulls_without_defaults",
    "set_object_meta", "to_kube_openapi", "valid_field_path", "validate_defaults", "validate_list_sets_and_maps",
    "validate_object_meta", "validate_structural",
]

_BLOCKING = frozenset({"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany",
                       "FieldValueTypeInvalid"})


def has_blocking_err(errs: Iterable[FieldError]) -> bool:
    """registry/customresource ``hasBlockingErr``: errors after which CEL rules are not run.

    The caller then appends ``field.invalid(None, None, "some validation rules were not checked
    because the object was invalid; correct the existing errors to complete validation")``.
    """
    return any(e.type.value in _BLOCKING for e in errs)
