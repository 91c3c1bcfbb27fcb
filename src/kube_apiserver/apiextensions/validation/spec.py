"""validateCustomResourceDefinitionSpec (on the internal spec) and its update variant."""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, Path
from ...apimachinery.validation import is_dns1035_label, is_dns1123_subdomain, validate_immutable_field
from . import gostruct, names, subresources
from .conversion import NONE_CONVERTER, validate_conversion, validate_enum
from .crvalidation import validate_custom_resource_validation
from .internal import norm_columns, norm_subresources, norm_validation, schema_of
from .options import Options
from .schemawalk import spec_has_defaults, spec_has_kubernetes_extensions
from .structural import structural_error
from .versions import validate_version

Object = dict[str, Any]
SCOPES = ["Cluster", "Namespaced"]


def _pruning(spec: Object) -> bool:
    """spec.preserveUnknownFields unset or false: unknown fields are pruned."""
    return not spec.get("preserveUnknownFields")


def validate_spec(spec: Object, opts: Options, path: Path) -> ErrorList:
    errs = _validate_group(spec.get("group") or "", path.child("group"))
    errs += validate_enum(path.child("scope"), spec.get("scope") or "", SCOPES, True)
    if _pruning(spec):
        opts = opts.with_(require_structural_schema=True)  # pruning needs a structural schema
    errs += _required_schemas(spec, opts, path)
    if opts.allow_defaults and spec_has_defaults(spec):
        opts = opts.with_(require_structural_schema=True)
        if spec.get("preserveUnknownFields") is not False:
            errs.append(
                field.invalid(
                    path.child("preserveUnknownFields"),
                    True,
                    "must be false in order to use defaults in the schema",
                )
            )
    if spec_has_kubernetes_extensions(spec):
        opts = opts.with_(require_structural_schema=True)
    errs += _validate_versions(spec, opts, path)
    errs += _validate_exclusive_fields(spec, path)
    errs += _validate_version_set(spec, path)
    errs += _validate_version_field(spec, path)
    errs += names.validate_required_names(spec.get("names") or {}, path.child("names"))
    errs += names.validate_names(spec.get("names") or {}, path.child("names"))
    errs += validate_custom_resource_validation(
        spec.get("validation"),
        _any_status_enabled(spec),
        opts.for_version(spec.get("version") or ""),
        path.child("validation"),
    )
    errs += subresources.validate_subresources(spec.get("subresources"), path.child("subresources"))
    errs += subresources.validate_columns(
        spec.get("additionalPrinterColumns"), path.child("additionalPrinterColumns")
    )
    errs += _validate_top_level_selectable_fields(spec, path)
    return errs + _validate_conversion_strategy(spec, opts, path)


def _validate_group(group: str, path: Path) -> ErrorList:
    if not group:
        return [field.required(path, "")]
    if msgs := is_dns1123_subdomain(group):
        return [field.invalid(path, group, ",".join(msgs))]
    if len(group.split(".")) < 2:
        return [field.invalid(path, group, "should be a domain with at least one dot")]
    return []


def _required_schemas(spec: Object, opts: Options, path: Path) -> ErrorList:
    """Every version needs a schema (or, for CRDs stored without one, every served version when pruning)."""
    if schema_of(spec.get("validation")) is not None:
        return []
    errs: ErrorList = []
    for i, version in enumerate(spec.get("versions") or []):
        missing = schema_of(version.get("schema")) is None
        schema_path = path.child("versions").index(i).child("schema", "openAPIV3Schema")
        if opts.require_openapi_schema:
            if missing:
                errs.append(field.required(schema_path, ""))
        elif _pruning(spec) and version.get("served") and missing:
            errs.append(field.required(schema_path, "because otherwise all fields are pruned"))
    return errs


def _subresources_for_version(spec: Object, name: str) -> Object | None:
    versions = spec.get("versions") or []
    if not any(v.get("subresources") is not None for v in versions):
        return spec.get("subresources")
    return next((v.get("subresources") for v in versions if v.get("name") == name), None)


def _status_enabled(subresources: Any) -> bool:
    return isinstance(subresources, dict) and subresources.get("status") is not None


def _any_status_enabled(spec: Object) -> bool:
    return _status_enabled(spec.get("subresources")) or any(
        _status_enabled(v.get("subresources")) for v in spec.get("versions") or []
    )


def _validate_versions(spec: Object, opts: Options, path: Path) -> ErrorList:
    errs: ErrorList = []
    for i, version in enumerate(spec.get("versions") or []):
        name = version.get("name") or ""
        version_path = path.child("versions").index(i)
        if msgs := is_dns1035_label(name):
            errs.append(field.invalid(version_path.child("name"), name, ",".join(msgs)))
        status = _status_enabled(_subresources_for_version(spec, name))
        errs += validate_version(version, version_path, status, opts)
    return errs


def _validate_version_set(spec: Object, path: Path) -> ErrorList:
    """Unique names and exactly one storage version."""
    versions = spec.get("versions") or []
    names = [v.get("name") or "" for v in versions]
    bad_value = gostruct.versions_struct(spec.get("versions"))
    errs: ErrorList = []
    if len(set(names)) != len(names):
        errs.append(field.invalid(path.child("versions"), bad_value, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage")) != 1:
        errs.append(
            field.invalid(
                path.child("versions"), bad_value, "must have exactly one version marked as storage version"
            )
        )
    return errs


def _is_set(version: Object, key: str) -> bool:
    """Schema and subresources are pointers (set when present); columns a slice (set when non-empty)."""
    return bool(version.get(key)) if key == "additionalPrinterColumns" else version.get(key) is not None


_PER_VERSION = (
    ("schema", "validation", "schemas", norm_validation),
    ("subresources", "subresources", "subresources", norm_subresources),
    ("additionalPrinterColumns", "additionalPrinterColumns", "additionalPrinterColumns", norm_columns),
)


def _validate_exclusive_fields(spec: Object, path: Path) -> ErrorList:
    """Top-level and per-version fields are exclusive, and per-version ones may not all be identical."""
    versions = spec.get("versions") or []
    errs: ErrorList = []
    for key, top, what, _ in _PER_VERSION:
        top_set = bool(spec.get(top)) if key == "additionalPrinterColumns" else spec.get(top) is not None
        if top_set and any(_is_set(v, key) for v in versions):
            errs.append(
                field.forbidden(path.child(top), f"top-level and per-version {what} are mutually exclusive")
            )
    for key, top, what, norm in _PER_VERSION:
        first = norm(versions[0].get(key)) if versions else None
        if versions and all(_is_set(v, key) and norm(v.get(key)) == first for v in versions):
            errs.append(
                field.invalid(
                    path.child("versions"),
                    gostruct.versions_struct(versions),
                    f"per-version {what} may not all be set to identical values "
                    f"(top-level {top} should be used instead)",
                )
            )
    return errs


def _validate_version_field(spec: Object, path: Path) -> ErrorList:
    version = spec.get("version") or ""
    if not version:
        return []
    errs: ErrorList = []
    if msgs := is_dns1035_label(version):
        errs.append(field.invalid(path.child("version"), version, ",".join(msgs)))
    versions = spec.get("versions") or []
    if versions and versions[0].get("name") != version:
        errs.append(
            field.invalid(path.child("version"), version, "must match the first version in spec.versions")
        )
    return errs


def _validate_top_level_selectable_fields(spec: Object, path: Path) -> ErrorList:
    fields = spec.get("selectableFields")
    if not fields:
        return []
    validation = spec.get("validation")
    if validation is None:
        return [
            field.invalid(
                path.child("selectableFields"), "", "may only be set when validations.schema is included"
            )
        ]
    schema = schema_of(validation)
    errs: ErrorList = []
    if (message := structural_error(schema)) is not None:
        errs.append(field.invalid(path.child("schema.openAPIV3Schema"), "", message))
    return errs + subresources.validate_selectable_fields(fields, schema, path.child("selectableFields"))


def _validate_conversion_strategy(spec: Object, opts: Options, path: Path) -> ErrorList:
    conversion = spec.get("conversion")
    errs: ErrorList = []
    if (
        conversion is not None
        and conversion.get("strategy") != NONE_CONVERTER
        and spec.get("preserveUnknownFields") is not False
    ):
        errs.append(
            field.invalid(
                path.child("conversion").child("strategy"),
                conversion.get("strategy") or "",
                "must be None if spec.preserveUnknownFields is true",
            )
        )
    return errs + validate_conversion(conversion, opts, path.child("conversion"))


def validate_spec_update(spec: Object, old: Object, opts: Options, path: Path) -> ErrorList:
    """validateCustomResourceDefinitionSpecUpdate."""
    errs = validate_spec(spec, opts, path)
    if opts.require_immutable_names:
        # scope and kind shape the storage of existing objects
        errs += validate_immutable_field(spec.get("scope") or "", old.get("scope") or "", path.child("scope"))
        errs += validate_immutable_field(
            (spec.get("names") or {}).get("kind") or "",
            (old.get("names") or {}).get("kind") or "",
            path.child("names", "kind"),
        )
    # group and plural make up the CRD's name, which never changes
    errs += validate_immutable_field(spec.get("group") or "", old.get("group") or "", path.child("group"))
    errs += validate_immutable_field(
        (spec.get("names") or {}).get("plural") or "",
        (old.get("names") or {}).get("plural") or "",
        path.child("names", "plural"),
    )
    return errs
