"""ValidateCustomResourceDefinitionOpenAPISchema: the recursive walk over a CRD's OpenAPI v3 schema,
with specStandardValidatorV3 (what OpenAPI v3 features a CRD schema may not use)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...apimachinery import field as f
from ...apimachinery.field import ErrorList, Path
from . import extensions
from .celcheck import CELContext, CELNode
from .options import Options
from .schemawalk import OPENAPI_V3_TYPES

Object = dict[str, Any]
META_FIELDS = ("apiVersion", "kind", "metadata")


@dataclass(frozen=True)
class StandardValidator:
    """specStandardValidatorV3 and the context it carries down the schema."""

    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    inside_resource_meta: bool = False
    require_valid_property_type: bool = True
    # the highest ancestor whose values cannot be correlated between revisions (oldSelf is unusable below)
    uncorrelatable_path: Path | None = None

    def with_forbidden_defaults(self, reason: str) -> StandardValidator:
        return replace(self, allow_defaults=False, disallow_defaults_reason=reason)

    def with_inside_resource_meta(self) -> StandardValidator:
        return replace(self, inside_resource_meta=True)

    def with_forbid_old_self(self, path: Path) -> StandardValidator:
        return self if self.uncorrelatable_path is not None else replace(self, uncorrelatable_path=path)

    def validate(self, s: Object, path: Path) -> ErrorList:
        """What no CRD schema node may contain. Anything allowed here must be handled by NewStructural."""
        errs: ErrorList = []
        typ = s.get("type") or ""
        if self.require_valid_property_type and typ and typ not in OPENAPI_V3_TYPES:
            errs.append(f.not_supported(path.child("type"), typ, OPENAPI_V3_TYPES))
        if s.get("default") is not None and not self.allow_defaults:
            detail = "must not be set"
            if self.disallow_defaults_reason:
                detail += " " + self.disallow_defaults_reason
            errs.append(f.forbidden(path.child("default"), detail))
        errs += _unsupported_keywords(s, path)
        if typ == "null":
            errs.append(
                f.forbidden(path.child("type"), "type cannot be set to null, use nullable as an alternative")
            )
        if isinstance(s.get("items"), list) and s["items"]:
            errs.append(f.forbidden(path.child("items"), "items must be a schema object and not an array"))
        if self.inside_resource_meta and s.get("x-kubernetes-embedded-resource"):
            errs.append(
                f.forbidden(
                    path.child("x-kubernetes-embedded-resource"), "must not be used inside of resource meta"
                )
            )
        return errs


def _unsupported_keywords(s: Object, path: Path) -> ErrorList:
    errs: ErrorList = []
    if s.get("id"):
        errs.append(f.forbidden(path.child("id"), "id is not supported"))
    if s.get("additionalItems") is not None:
        errs.append(f.forbidden(path.child("additionalItems"), "additionalItems is not supported"))
    for key in ("patternProperties", "definitions"):
        if s.get(key):
            errs.append(f.forbidden(path.child(key), f"{key} is not supported"))
    if s.get("dependencies") is not None:
        errs.append(f.forbidden(path.child("dependencies"), "dependencies is not supported"))
    if s.get("$ref") is not None:
        errs.append(f.forbidden(path.child("$ref"), "$ref is not supported"))
    return errs


@dataclass
class WalkResult:
    schema_errors: ErrorList = field(default_factory=list)
    cel_nodes: list[CELNode] = field(default_factory=list)

    def extend(self, other: WalkResult) -> None:
        self.schema_errors += other.schema_errors
        self.cel_nodes += other.cel_nodes


def validate_openapi_schema(
    s: Any, path: Path, ssv: StandardValidator, is_root: bool, opts: Options, cel: CELContext | None
) -> WalkResult:
    """ValidateCustomResourceDefinitionOpenAPISchema. `cel` is the CEL context reaching this node (only
    through properties, additionalProperties and items; None under allOf, not, ...)."""
    out = WalkResult()
    if not isinstance(s, dict):
        return out
    out.schema_errors += ssv.validate(s, path)
    if s.get("uniqueItems"):
        out.schema_errors.append(
            f.forbidden(
                path.child("uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    _walk_additional_properties(s, path, ssv, opts, cel, out)
    _walk_properties(s, path, ssv, is_root, opts, cel, out)
    out.extend(validate_openapi_schema(s.get("not"), path.child("not"), ssv, False, opts, None))
    for key in ("allOf", "oneOf", "anyOf"):
        for i, sub in enumerate(s.get(key) or []):
            out.extend(validate_openapi_schema(sub, path.child(key).index(i), ssv, False, opts, None))
    for name, sub in (s.get("definitions") or {}).items():
        out.extend(validate_openapi_schema(sub, path.child("definitions").key(name), ssv, False, opts, None))
    _walk_items(s, path, ssv, opts, cel, out)
    for name, dep in (s.get("dependencies") or {}).items():
        if isinstance(dep, dict):
            out.extend(
                validate_openapi_schema(dep, path.child("dependencies").key(name), ssv, False, opts, None)
            )
    out.schema_errors += extensions.validate_extensions(s, path, opts)
    if s.get("x-kubernetes-validations"):
        out.schema_errors += extensions.validate_rule_shapes(s, path)
        # CEL is only attempted where the schema (at and below this node) is otherwise valid
        if not out.schema_errors and cel is not None:
            out.cel_nodes.append(CELNode(path, s, ssv.uncorrelatable_path, cel,
                                        is_root or bool(s.get("x-kubernetes-embedded-resource"))))
    return out


def _walk_additional_properties(
    s: Object, path: Path, ssv: StandardValidator, opts: Options, cel: CELContext | None, out: WalkResult
) -> None:
    additional = s.get("additionalProperties")
    if additional is None:
        return
    # properties describe structs, additionalProperties maps: both together contradict pruning
    if s.get("properties") and (additional is not True):
        out.schema_errors.append(
            f.forbidden(
                path.child("additionalProperties"), "additionalProperties and properties are mutual exclusive"
            )
        )
    sub = ssv
    if ssv.inside_resource_meta:
        # pruning a defaulted value inside metadata maps would be ambiguous
        sub = ssv.with_forbidden_defaults("inside additionalProperties applying to object metadata")
    out.extend(
        validate_openapi_schema(
            additional, path.child("additionalProperties"), sub, False, opts, _child(cel, s)
        )
    )


def _walk_properties(
    s: Object,
    path: Path,
    ssv: StandardValidator,
    is_root: bool,
    opts: Options,
    cel: CELContext | None,
    out: WalkResult,
) -> None:
    properties = s.get("properties") or {}
    map_type = s.get("x-kubernetes-map-type")
    for name, prop in properties.items():
        sub = ssv
        if map_type not in (None, "granular", "atomic"):
            sub = sub.with_forbid_old_self(path)
        if (is_root or s.get("x-kubernetes-embedded-resource")) and name in META_FIELDS:
            sub = sub.with_inside_resource_meta()
            if is_root:
                sub = sub.with_forbidden_defaults(f"in top-level {name}")
        prop = prop if isinstance(prop, dict) else {}
        out.extend(
            validate_openapi_schema(
                prop, path.child("properties").key(name), sub, False, opts, _child(cel, s)
            )
        )


def _walk_items(
    s: Object, path: Path, ssv: StandardValidator, opts: Options, cel: CELContext | None, out: WalkResult
) -> None:
    items = s.get("items")
    if items is None:
        return
    sub = ssv
    # old and new items correlate only in map lists; sets are not correlated for CEL
    if s.get("x-kubernetes-list-type") != "map":
        sub = sub.with_forbid_old_self(path)
    if isinstance(items, dict):
        out.extend(validate_openapi_schema(items, path.child("items"), sub, False, opts, _child(cel, s)))
    elif isinstance(items, list):
        for i, item in enumerate(items):
            out.extend(
                validate_openapi_schema(item, path.child("items").index(i), sub, False, opts, _child(cel, s))
            )


def _child(cel: CELContext | None, parent: Object) -> CELContext | None:
    return None if cel is None else cel.child(parent)
