"""The custom resource strategy (pkg/registry/customresource/strategy.go and validator.go): the CRD's
structural schema prunes, defaults and validates, CEL rules run, status and scale follow the CRD's
subresources, and selectable fields feed field selectors."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any

from ...apimachinery import errors, field, jsonpath, validation
from ...lazyimport import lazy_import
from ...registry.context import Context
from ...registry.rest import ResourceInfo
from ...registry.strategy import Strategy
from .scale import ScalePaths

if TYPE_CHECKING:
    from .. import schema as structural
else:
    structural = lazy_import("kube_apiserver.apiextensions.schema")  # ~60 ms: once a CRD is served

Object = dict[str, Any]
MAX_INT32 = 2**31 - 1


@dataclass
class VersionSchema:
    """What one version's openAPIV3Schema gives serving: compiled once per CRD change."""

    schema: Object | None
    structural: Any = None
    validator: Any = None
    rules: Any = None
    selectable: dict[str, Any] = dc_field(default_factory=dict)  # field name -> compiled JSONPath

    @classmethod
    def of(cls, version: Object) -> VersionSchema:
        props = ((version.get("schema") or {}).get("openAPIV3Schema"))
        out = cls(props)
        if isinstance(props, dict):
            out.structural = structural.new_structural(props)
            out.validator = structural.SchemaValidator(props)
            out.rules = structural.new_rule_validator(out.structural)  # None without rules
        for selectable in version.get("selectableFields") or []:
            path = selectable.get("jsonPath", "")
            out.selectable[path.lstrip(".")] = jsonpath.compile_path(path)
        return out


class CustomResourceStrategy(Strategy):
    tracks_generation = True

    def __init__(self, info: ResourceInfo, schema: VersionSchema, status: bool, scale: ScalePaths | None):
        self.has_status_subresource = status
        super().__init__(info)
        self.schema = schema
        self.scale = scale
        self.selectable_fields = tuple(schema.selectable)

    def default(self, obj: Object) -> None:
        """Unknown fields pruned and defaults applied, as decoding a request body does. Metadata, and
        an embedded resource's apiVersion/kind, that do not decode are a 400, as the request decoder
        (which drops no invalid metadata) has them."""
        s = self.schema.structural
        if s is not None:
            try:
                structural.get_object_meta(obj)
            except structural.MetaDecodeError as err:
                raise errors.bad_request(self._undecodable(str(err))) from None
            structural.prune(obj, s, True)
            structural.prune_non_nullable_nulls_without_defaults(obj, s)
            err, _ = structural.coerce(None, obj, s, True)
            if err is not None:
                raise errors.bad_request(self._undecodable(str(err)))
            structural.default(obj, s)

    def _undecodable(self, why: str) -> str:
        version = self.info.api_version.rsplit("/", 1)[-1]
        return f'{self.info.kind} in version "{version}" cannot be handled as a {self.info.kind}: {why}'

    def prepare_for_update(self, ctx: Context, obj: Object, old: Object) -> None:
        if self.has_status_subresource:
            if "status" in old:
                obj["status"] = old["status"]
            else:
                obj.pop("status", None)
        generation = old["metadata"].get("generation", 1)
        changed = {k: v for k, v in obj.items() if k != "metadata"} != {k: v for k, v in old.items()
                                                                         if k != "metadata"}
        obj["metadata"]["generation"] = generation + 1 if changed else generation

    def validate(self, ctx: Context, obj: Object) -> field.ErrorList:
        return self._validate(ctx, obj, None)

    def validate_update(self, ctx: Context, obj: Object, old: Object) -> field.ErrorList:
        return Strategy.validate_update(self, ctx, obj, old) + self._validate(ctx, obj, old)

    update_validates_fully = True

    def _validate(self, ctx: Context, obj: Object, old: Object | None) -> field.ErrorList:
        errs = self._type_meta(obj)
        if errs:
            return errs
        errs = super().validate(ctx, obj)
        if self.schema.validator is not None:
            errs += self.schema.validator.validate(obj)
        errs += self._scale_errors(obj)
        s = self.schema.structural
        if s is not None:
            errs += structural.validate_object_meta(None, obj, s, False)
            # An update is held to the list rules only when the stored object already met them.
            if old is None or not structural.validate_list_sets_and_maps(None, s, old):
                errs += structural.validate_list_sets_and_maps(None, s, obj)
        if self.schema.rules is not None:
            if structural.has_blocking_err(errs):
                errs.append(field.invalid(None, None, BLOCKED_RULES))
            else:
                errs += self.schema.rules.validate(obj, old)
        return errs

    def _type_meta(self, obj: Object) -> field.ErrorList:
        errs: field.ErrorList = []
        if obj.get("kind") != self.info.kind:
            errs.append(field.invalid(field.Path("kind"), obj.get("kind", ""), f"must be {self.info.kind}"))
        if obj.get("apiVersion") != self.info.api_version:
            errs.append(field.invalid(field.Path("apiVersion"), obj.get("apiVersion", ""),
                                      f"must be {self.info.api_version}"))
        return errs

    def _scale_errors(self, obj: Object) -> field.ErrorList:
        if self.scale is None:
            return []
        errs = _replicas_errors(obj, self.scale.spec_replicas)
        errs += _replicas_errors(obj, self.scale.status_replicas)
        if self.scale.label_selector:
            value, why = self.scale.nested(obj, self.scale.label_selector)
            if why or (value is not None and not isinstance(value, str)):
                errs.append(field.invalid(field.Path(self.scale.label_selector), "",
                                          why or f"{self.scale.label_selector} accessor error: {value} is of the "
                                                 f"type {_go_type(value)}, expected string"))
        return errs

    def warnings_on_write(self, obj: Object, old: Object | None) -> list[str]:
        """New finalizer names that are not fully qualified get a warning (generateWarningsFromObj)."""
        new = set(obj["metadata"].get("finalizers") or ())
        if old is not None:
            new -= set(old["metadata"].get("finalizers") or ())
        return [w for name in sorted(new) for w in _finalizer_warnings(name)]

    def field_set(self, obj: Object) -> dict[str, str]:
        fields = super().field_set(obj)
        for name, find in self.schema.selectable.items():
            found = find(obj)
            value = found[0] if found else None
            fields[name] = "" if value is None else jsonpath.text(value)
        return fields


def _replicas_errors(obj: Object, path: str) -> field.ErrorList:
    value, why = ScalePaths.nested(obj, path)
    if why:
        return [field.invalid(field.Path(path), 0, why)]
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [field.invalid(field.Path(path), 0, f"{path} accessor error: {value} is of the type "
                                                   f"{_go_type(value)}, expected int64")]
    if value < 0:
        return [field.invalid(field.Path(path), value, "should be a non-negative integer")]
    if value > MAX_INT32:
        return [field.invalid(field.Path(path), value, f"should be less than or equal to {MAX_INT32}")]
    return []


def _go_type(value: Any) -> str:
    return {str: "string", bool: "bool", float: "float64", int: "int64", dict: "map[string]interface {}",
            list: "[]interface {}"}.get(type(value), "<nil>")


STANDARD_FINALIZERS = frozenset({"orphan", "foregroundDeletion", "kubernetes"})


def _finalizer_warnings(name: str) -> list[str]:
    """validateKubeFinalizerName: custom resources get warnings, not errors, for unqualified names."""
    shown = f'metadata.finalizers: "{name}"'
    warnings = [f"{shown}: {msg}" for msg in validation.is_qualified_name(name)]
    if "/" not in name and name not in STANDARD_FINALIZERS:
        warnings.append(f"{shown}: prefer a domain-qualified finalizer name to avoid accidental conflicts with "
                        f"other finalizer writers")
    return warnings


BLOCKED_RULES = ("some validation rules were not checked because the object was invalid; correct the existing "
                 "errors to complete validation")
