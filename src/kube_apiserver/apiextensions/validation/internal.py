"""The internal (hub) view of a v1 CustomResourceDefinition, and Go's semantic equality on it.

Upstream validates the *internal* apiextensions type, reached through
Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec. That conversion
moves per-version schemas, subresources, printer columns and selectable fields to the top level when
all versions carry identical values, and copies versions[0].name to spec.version; this is why
kube-apiserver reports errors of a v1 CRD under ``spec.validation.openAPIV3Schema`` and
``spec.subresources``. The view built here is a dict with those internal fields (JSON key names kept);
schemas are shared with the input, never copied or mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Object = dict[str, Any]

# JSONSchemaProps fields that are Go values (not pointers): their zero value equals "unset".
_SCHEMA_ZERO_STRINGS = ("id", "$schema", "description", "type", "format", "title", "pattern")
_SCHEMA_ZERO_BOOLS = (
    "nullable",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "uniqueItems",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
)
_SCHEMA_FLOATS = ("maximum", "minimum", "multipleOf")
_SCHEMA_INTS = ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties")
_SCHEMA_LISTS = ("allOf", "oneOf", "anyOf")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions")


def crd_to_internal(crd: Object) -> Object:
    """The internal view of a v1 CRD: metadata and status as they are, the spec converted."""
    return {
        "metadata": crd.get("metadata") or {},
        "spec": spec_to_internal(crd.get("spec") or {}),
        "status": crd.get("status") or {},
    }


def spec_to_internal(spec: Object) -> Object:
    """Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec."""
    versions = [dict(v) if isinstance(v, dict) else {} for v in spec.get("versions") or []]
    out: Object = {
        "group": spec.get("group") or "",
        "names": spec.get("names") or {},
        "scope": spec.get("scope") or "",
        # nil and empty differ only in how a bad value prints
        "versions": versions if spec.get("versions") is not None else None,
        "conversion": conversion_to_internal(spec.get("conversion")),
        # a plain bool in v1, a *bool set from it in the internal type
        "preserveUnknownFields": bool(spec.get("preserveUnknownFields")),
        "version": "",
        "validation": None,
        "subresources": None,
        "additionalPrinterColumns": None,
        "selectableFields": None,
    }
    if not versions:
        return out
    out["version"] = versions[0].get("name") or ""
    for per_version, top_level, norm in _HOISTED:
        first = norm(versions[0].get(per_version))
        if all(norm(v.get(per_version)) == first for v in versions):
            out[top_level] = versions[0].get(per_version)
            for v in versions:
                v.pop(per_version, None)
    return out


def conversion_to_internal(conversion: Object | None) -> Object | None:
    """Convert_v1_CustomResourceConversion_To_apiextensions_CustomResourceConversion."""
    if conversion is None:
        return None
    webhook = conversion.get("webhook")
    out: Object = {
        "strategy": conversion.get("strategy") or "",
        "webhookClientConfig": None,
        "conversionReviewVersions": None,
    }
    if isinstance(webhook, dict):
        out["conversionReviewVersions"] = webhook.get("conversionReviewVersions")
        if webhook.get("clientConfig") is not None:
            out["webhookClientConfig"] = webhook["clientConfig"]
    return out


def schema_of(validation: Object | None) -> Object | None:
    """CustomResourceValidation.OpenAPIV3Schema, tolerating an absent validation."""
    if not isinstance(validation, dict):
        return None
    schema = validation.get("openAPIV3Schema")
    return schema if isinstance(schema, dict) else None


def schema_for_version(spec: Object, name: str) -> tuple[bool, Object | None]:
    """GetSchemaForVersion on an internal spec: (found, CustomResourceValidation)."""
    for version in spec.get("versions") or []:
        if version.get("name") == name:
            return True, (
                version.get("schema") if version.get("schema") is not None else spec.get("validation")
            )
    return False, None


# --- semantic equality (apiequality.Semantic.DeepEqual: nil == empty for slices/maps) ---------------


def _json_key(value: Any) -> Any:
    """A comparable key of a decoded JSON value where true != 1 and 1 != 1.0, as in Go."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("i", value)
    if isinstance(value, float):
        return ("f", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, dict):
        return ("d", tuple(sorted((str(k), _json_key(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("l", tuple(_json_key(v) for v in value))
    return ("n", None)


def norm_schema(schema: Any) -> Any:
    """A canonical form of a JSONSchemaProps dict, comparable with == (None when absent)."""
    if not isinstance(schema, dict):
        return None
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if value is None:
            continue
        normalized = _norm_schema_field(key, value)
        if normalized is not _DROP:
            out[key] = normalized
    return out


_DROP = object()


def _norm_schema_field(key: str, value: Any) -> Any:
    if key in _SCHEMA_ZERO_STRINGS:
        return _DROP if value == "" else value
    if key in _SCHEMA_ZERO_BOOLS:
        return _DROP if value is False else value
    if key in _SCHEMA_FLOATS and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if key in _SCHEMA_INTS and isinstance(value, float) and value.is_integer():
        return int(value)
    if key in _SCHEMA_LISTS:
        return [norm_schema(s) for s in value] if value else _DROP
    if key in _SCHEMA_MAPS:
        return {k: norm_schema(s) for k, s in value.items()} if value else _DROP
    if key in ("not",):
        return norm_schema(value)
    if key == "items":
        return [norm_schema(s) for s in value] if isinstance(value, list) else norm_schema(value)
    if key in ("additionalProperties", "additionalItems"):
        return (
            {"allows": True, "schema": norm_schema(value)} if isinstance(value, dict) else {"allows": value}
        )
    if key == "dependencies":
        return _norm_dependencies(value)
    if key == "x-kubernetes-validations":
        return (
            [_norm_struct(r, ("rule", "message", "messageExpression", "fieldPath"), ()) for r in value]
            if value
            else _DROP
        )
    if key in ("required", "x-kubernetes-list-map-keys"):
        return value if value else _DROP
    if key == "enum":
        return _json_key(value) if value else _DROP
    # JSON values (default, example) must not compare true == 1
    return _json_key(value) if key in ("default", "example") else value


def _norm_dependencies(value: Any) -> Any:
    if not value:
        return _DROP
    return {
        k: {"schema": norm_schema(d)} if isinstance(d, dict) else {"property": d or []}
        for k, d in value.items()
    }


def _norm_struct(value: Any, zero_strings: tuple[str, ...], zero_ints: tuple[str, ...]) -> Any:
    if not isinstance(value, dict):
        return None
    return {
        key: item
        for key, item in value.items()
        if not (item is None or (key in zero_strings and item == "") or (key in zero_ints and item == 0))
    }


def norm_validation(validation: Any) -> Any:
    """CustomResourceValidation: a pointer, so absent != present-but-empty."""
    if not isinstance(validation, dict):
        return None
    return ("v", norm_schema(validation.get("openAPIV3Schema")))


def norm_subresources(subresources: Any) -> Any:
    if not isinstance(subresources, dict):
        return None
    status = subresources.get("status")
    scale = subresources.get("scale")
    return (
        "sr",
        status is not None,
        _norm_struct(scale, ("specReplicasPath", "statusReplicasPath"), ()) if scale is not None else None,
    )


def norm_columns(columns: Any) -> Any:
    return tuple(
        _norm_struct(c, ("name", "type", "format", "description", "jsonPath"), ("priority",))
        for c in columns or []
    )


def norm_selectable_fields(fields: Any) -> Any:
    return tuple(_norm_struct(f, ("jsonPath",), ()) for f in fields or [])


_HOISTED: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("subresources", "subresources", norm_subresources),
    ("schema", "validation", norm_validation),
    ("additionalPrinterColumns", "additionalPrinterColumns", norm_columns),
    ("selectableFields", "selectableFields", norm_selectable_fields),
)
