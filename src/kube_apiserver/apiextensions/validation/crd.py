"""ValidateCustomResourceDefinition, ValidateCustomResourceDefinitionUpdate and
ValidateUpdateCustomResourceDefinitionStatus on a v1 CRD dict, with the options upstream computes."""

from __future__ import annotations

from typing import Any

from ...apimachinery.field import ErrorList, Path
from ...apimachinery.validation import (
    NameFunc,
    name_is_dns_subdomain,
    validate_object_meta,
    validate_object_meta_update,
)
from . import schemawalk, structural
from .conversion import allow_invalid_ca_bundle, has_valid_conversion_review_version_or_empty
from .extensions import validate_map_list_keys_map_set
from .internal import crd_to_internal, norm_validation, schema_for_version
from .options import CREATE_OPTIONS, Options
from .spec import validate_spec, validate_spec_update
from .status import (
    validate_api_approval,
    validate_preserve_unknown_fields,
    validate_status,
    validate_stored_versions,
)

Object = dict[str, Any]


def _name_func(spec: Object) -> NameFunc:
    required = f"{(spec.get('names') or {}).get('plural') or ''}.{spec.get('group') or ''}"

    def check(name: str, prefix: bool) -> list[str]:
        msgs = name_is_dns_subdomain(name, prefix)
        if name != required:
            msgs.append('must be spec.names.plural+"."+spec.group')
        return msgs

    return check


def _stored_versions(crd: Object) -> ErrorList:
    return validate_stored_versions(
        (crd["status"] or {}).get("storedVersions"),
        crd["spec"].get("versions") or [],
        Path("status").child("storedVersions"),
    )


def validate_crd(crd: Object) -> ErrorList:
    """ValidateCustomResourceDefinition: everything a create checks, metadata included."""
    internal = crd_to_internal(crd)
    spec = internal["spec"]
    errs = validate_object_meta(internal["metadata"], False, _name_func(spec), Path("metadata"))
    errs += validate_spec(spec, CREATE_OPTIONS, Path("spec"))
    errs += validate_status(internal["status"], Path("status"))
    errs += _stored_versions(internal)
    errs += validate_api_approval(crd, None, spec.get("group") or "")
    return errs + validate_preserve_unknown_fields(crd, None)


def validate_crd_update(crd: Object, old: Object) -> ErrorList:
    """ValidateCustomResourceDefinitionUpdate: the create rules, relaxed where the old object already
    broke them, plus the immutable fields."""
    internal, old_internal = crd_to_internal(crd), crd_to_internal(old)
    opts = update_options(internal, old_internal)
    spec = internal["spec"]
    errs = validate_object_meta_update(internal["metadata"], old_internal["metadata"], Path("metadata"))
    errs += validate_spec_update(spec, old_internal["spec"], opts, Path("spec"))
    errs += validate_status(internal["status"], Path("status"))
    errs += _stored_versions(internal)
    errs += validate_api_approval(crd, old, spec.get("group") or "")
    return errs + validate_preserve_unknown_fields(crd, old)


def validate_crd_status(status: Object, path: Path | None = None) -> ErrorList:
    """ValidateCustomResourceDefinitionStatus: the accepted names."""
    return validate_status(status or {}, path or Path("status"))


def validate_crd_status_update(crd: Object, old: Object) -> ErrorList:
    """ValidateUpdateCustomResourceDefinitionStatus (what the status subresource checks)."""
    errs = validate_object_meta_update(crd.get("metadata") or {}, old.get("metadata") or {}, Path("metadata"))
    return errs + validate_crd_status(crd.get("status") or {})


def _established(crd: Object) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in conditions
        if isinstance(c, dict)
    )


def update_options(new: Object, old: Object) -> Options:
    """The validationOptions of an update, computed from the old (internal) object."""
    old_spec = old["spec"]
    conversion = old_spec.get("conversion")
    rules, messages = schemawalk.expressions_in(old_spec)
    return Options(
        require_recognized_conversion_review_version=conversion is None
        or has_valid_conversion_review_version_or_empty(conversion.get("conversionReviewVersions")),
        require_immutable_names=_established(old),
        require_openapi_schema=_all_versions_specify_schema(old_spec),
        require_valid_property_type=not schemawalk.spec_has_invalid_types(old_spec),
        require_structural_schema=not schemawalk.has_schema_with(old_spec, structural.is_non_structural),
        require_pruned_defaults=not schemawalk.has_schema_with(
            old_spec, structural.schema_has_unpruned_defaults
        ),
        require_atomic_set_type=not schemawalk.has_schema_with(old_spec, schemawalk.has_non_atomic_set_type),
        require_map_list_keys_map_set_validation=not schemawalk.has_schema_with(old_spec, _has_bad_map_list),
        preexisting_rules=frozenset(rules),
        preexisting_message_expressions=frozenset(messages),
        versions_with_unchanged_schemas=_versions_with_unchanged_schemas(new["spec"], old_spec),
        allow_invalid_ca_bundle=allow_invalid_ca_bundle(old_spec, _established(old)),
    )


def _all_versions_specify_schema(spec: Object) -> bool:
    if (spec.get("validation") or {}).get("openAPIV3Schema") is not None:
        return True
    return all((v.get("schema") or {}).get("openAPIV3Schema") is not None for v in spec.get("versions") or [])


def _has_bad_map_list(schema: Object) -> bool:
    return schemawalk.schema_has(schema, lambda n: bool(validate_map_list_keys_map_set(n, Path(""))))


def _versions_with_unchanged_schemas(spec: Object, old_spec: Object) -> frozenset[str]:
    """findVersionsWithUnchangedSchemas."""
    unchanged = set()
    for version in spec.get("versions") or []:
        name = version.get("name") or ""
        found, new_schema = schema_for_version(spec, name)
        old_found, old_schema = schema_for_version(old_spec, name)
        if found and old_found and norm_validation(new_schema) == norm_validation(old_schema):
            unchanged.add(name)
    return frozenset(unchanged)
