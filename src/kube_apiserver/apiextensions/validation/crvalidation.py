"""validateCustomResourceDefinitionValidation: one CustomResourceValidation (a version's schema or
the top-level one): root restrictions, structural checks, the schema walk, then CEL."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from . import structural
from .celcheck import CELContext, cel_errors
from .gostruct import SCHEMA_FIELDS, schema_struct
from .openapi import StandardValidator, validate_openapi_schema
from .options import Options

Object = dict[str, Any]
# fields kept when status is extracted as properties["status"], so no validation is lost
ALLOWED_AT_ROOT = (
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
)
_ROOT_DETAIL = (
    f"only [{' '.join(ALLOWED_AT_ROOT)}] fields are allowed at the root of the schema "
    "if the status subresource is enabled"
)


def validate_custom_resource_validation(
    validation: Object | None, status_enabled: bool, opts: Options, path: Path
) -> ErrorList:
    if not isinstance(validation, dict):
        return []
    schema = validation.get("openAPIV3Schema")
    if not isinstance(schema, dict):
        return []
    schema_path = path.child("openAPIV3Schema")
    errs: ErrorList = []
    if status_enabled:
        errs += _root_with_status(schema, path)
    if schema.get("nullable"):
        errs.append(
            field.forbidden(path.child("openAPIV3Schema.nullable"), "nullable cannot be true at the root")
        )
    cel_ok = False
    init_errs: ErrorList = []
    if opts.require_structural_schema:
        if (message := structural.structural_error(schema)) is not None:
            # overlaps with the schema walk's errors: shown only if that walk finds nothing
            init_errs.append(field.invalid(schema_path, "", message))
        elif structural_errs := structural.validate_structural(schema, schema_path):
            errs += structural_errs
        elif default_errs := structural.validate_defaults(schema, schema_path, opts.require_pruned_defaults):
            errs += default_errs
        else:
            cel_ok = True
    ssv = StandardValidator(
        allow_defaults=opts.allow_defaults,
        disallow_defaults_reason=opts.disallow_defaults_reason,
        require_valid_property_type=opts.require_valid_property_type,
    )
    walk = validate_openapi_schema(schema, schema_path, ssv, True, opts, CELContext() if cel_ok else None)
    errs += walk.schema_errors
    errs += cel_errors(walk.cel_nodes, schema_path, opts)
    if not errs:
        errs += init_errs
    return errs


def _root_with_status(schema: Object, path: Path) -> ErrorList:
    """Upstream walks the Go struct fields in order and stops at the first offending one."""
    for go_name, key, kind in SCHEMA_FIELDS:
        value = schema.get(key)
        if value is None or (kind == "s" and value == "") or (kind == "b" and value is False):
            continue
        if go_name == "Type":
            if value != "object":
                return [
                    field.invalid(
                        path.child("openAPIV3Schema.type"),
                        value,
                        'only "object" is allowed as the type at the root of the schema '
                        "if the status subresource is enabled",
                    )
                ]
            continue
        if go_name not in ALLOWED_AT_ROOT:
            return [field.invalid(path.child("openAPIV3Schema"), schema_struct(schema), _ROOT_DETAIL)]
    return []
