"""One entry of spec.versions (validateCustomResourceDefinitionVersion) and its deprecation warning."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from . import subresources
from .crvalidation import validate_custom_resource_validation
from .internal import schema_of
from .options import Options
from .structural import structural_error

Object = dict[str, Any]


def validate_version(version: Object, path: Path, status_enabled: bool, opts: Options) -> ErrorList:
    warning = version.get("deprecationWarning")
    errs = [
        field.invalid(path.child("deprecationWarning"), warning, msg)
        for msg in deprecation_warning_errors(bool(version.get("deprecated")), warning)
    ]
    opts = opts.for_version(version.get("name") or "")
    errs += validate_custom_resource_validation(
        version.get("schema"), status_enabled, opts, path.child("schema")
    )
    errs += subresources.validate_subresources(version.get("subresources"), path.child("subresources"))
    errs += subresources.validate_columns(
        version.get("additionalPrinterColumns"), path.child("additionalPrinterColumns")
    )
    fields = version.get("selectableFields")
    if fields:
        schema = schema_of(version.get("schema"))
        if schema is None:
            errs.append(
                field.invalid(
                    path.child("selectableFields"),
                    "",
                    "may only be set when `version.schema.openAPIV3Schema` is not included",
                )
            )
        else:
            if (message := structural_error(schema)) is not None:
                errs.append(field.invalid(path.child("schema.openAPIV3Schema"), "", message))
            errs += subresources.validate_selectable_fields(fields, schema, path.child("selectableFields"))
    return errs


def deprecation_warning_errors(deprecated: bool, warning: Any) -> list[str]:
    """validateDeprecationWarning (lengths and indexes are in UTF-8 bytes, as in Go)."""
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if not isinstance(warning, str):
        return []
    errors: list[str] = []
    encoded = warning.encode("utf-8", "surrogatepass")
    if len(encoded) > 256:
        errors.append("must be <= 256 characters long")
    if not warning:
        errors.append("must not be an empty string")
    offset = 0
    for char in warning:
        if not _go_is_print(char):
            errors.append(
                f"must only contain printable UTF-8 characters; non-printable character found at index "
                f"{offset}"
            )
            break
        offset += len(char.encode("utf-8", "surrogatepass"))
    if any(0xD800 <= ord(c) <= 0xDFFF for c in warning):
        errors.append("must only contain printable UTF-8 characters")
    return errors


def _go_is_print(char: str) -> bool:
    """unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space."""
    return char == " " or (char.isprintable() and not char.isspace())
