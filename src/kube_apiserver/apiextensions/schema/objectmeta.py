"""TypeMeta and ObjectMeta of custom resources and of embedded resources
(pkg/apiserver/schema/objectmeta: algorithm.go, coerce.go, validation.go).

``coerce`` checks apiVersion/kind types and normalizes ``metadata`` (unknown fields pruned) of every
``x-kubernetes-embedded-resource`` object, and of the root when asked. ``validate`` applies the
create-time ObjectMeta checks and the apiVersion/kind rules to embedded resources.
"""

from __future__ import annotations

from typing import Any

from ...apimachinery import field
from ...apimachinery.field import ErrorList, FieldError, Path
from ...apimachinery.schema import parse_group_version
from ...apimachinery.validation import is_dns1035_label, validate_object_meta, validate_path_segment_name
from .derived import has_embedded
from .metadecode import MetaDecodeError, decode_object_meta, decode_object_meta_lenient
from .pruning import as_resource_root
from .structural import Structural


def get_object_meta(obj: dict[str, Any], drop_malformed: bool = False, return_unknown: bool = False,
                    parent: Path | None = None) -> tuple[dict[str, Any] | None, bool, list[str]]:
    """``GetObjectMetaWithOptions``: (normalized metadata, found, unknown field paths).

    Raises MetaDecodeError when the metadata does not decode and malformed fields are kept.
    """
    if "metadata" not in obj:
        return None, False, []
    metadata = obj["metadata"]
    prefix = field.path_str(field.child_of(parent, "metadata"))
    unknown: list[str] | None = [] if return_unknown else None
    try:
        meta = decode_object_meta(metadata, unknown, prefix)
        return meta, True, unknown or []
    except MetaDecodeError:
        if not drop_malformed:
            raise
    if not isinstance(metadata, dict):
        raise MetaDecodeError(f"invalid metadata: expected object, got {_go_type_name(metadata)}")
    unknown = [] if return_unknown else None
    return decode_object_meta_lenient(metadata, unknown, prefix), True, unknown or []


def _go_type_name(value: Any) -> str:
    names = {str: "string", bool: "bool", int: "int64", float: "float64", list: "[]interface {}"}
    return "<nil>" if value is None else names.get(type(value), "map[string]interface {}")


def set_object_meta(obj: dict[str, Any], meta: dict[str, Any] | None) -> None:
    """``SetObjectMeta``: write normalized metadata back (``None`` removes it)."""
    if meta is None:
        obj.pop("metadata", None)
    else:
        obj["metadata"] = meta


def coerce(path: Path | None, obj: Any, s: Structural | None, is_resource_root: bool,
           drop_invalid: bool = False, return_unknown: bool = False) -> tuple[FieldError | None, list[str]]:
    """``CoerceWithOptions``: (first error or None, sorted unknown metadata field paths)."""
    if is_resource_root:
        s = as_resource_root(s)
    unknown: list[str] = []
    err = _coerce(path, obj, s, drop_invalid, return_unknown, unknown)
    unknown.sort()
    return err, unknown


def _coerce(path: Path | None, x: Any, s: Structural | None, drop: bool, track: bool,
            unknown: list[str]) -> FieldError | None:
    if s is None or not has_embedded(s):
        return None
    if isinstance(x, dict):
        for k in list(x):
            if k not in x:
                continue
            v = x[k]
            if s.x_embedded_resource:
                err = _coerce_meta_field(path, x, k, v, drop, track, unknown)
                if err is not None:
                    return err
            prop = (s.properties or {}).get(k)
            err = None
            if prop is not None:
                err = _coerce(field.child_of(path, k), v, prop, drop, track, unknown)
            elif s.additional_properties is not None:
                err = _coerce(_key(path, k), v, s.additional_properties.structural, drop, track, unknown)
            if err is not None:
                return err
    elif isinstance(x, list):
        for i, v in enumerate(x):
            err = _coerce(_index(path, i), v, s.items, drop, track, unknown)
            if err is not None:
                return err
    return None


def _key(path: Path | None, key: str) -> Path:
    # Go's (*Path)(nil).Key(k) is a root rendered as "[k]"
    return path.key(key) if path is not None else field._node("", key, None)


def _index(path: Path | None, i: int) -> Path:
    return path.index(i) if path is not None else field._node("", str(i), None)


def _coerce_meta_field(path: Path | None, x: dict[str, Any], k: str, v: Any, drop: bool, track: bool,
                       unknown: list[str]) -> FieldError | None:
    if k in ("apiVersion", "kind"):
        if not isinstance(v, str):
            if drop:
                del x[k]
            else:
                return field.invalid(field.child_of(path, k), v, "must be a string")
    elif k == "metadata":
        try:
            meta, found, paths = get_object_meta(x, drop, track, path)
        except MetaDecodeError as err:
            if not drop:
                return field.invalid(field.child_of(path, "metadata"), v, str(err))
            return None
        unknown.extend(paths)
        if found and meta is not None:
            if meta.get("creationTimestamp") is None:
                meta.pop("creationTimestamp", None)
            x["metadata"] = meta
    return None


# --- validation.go -------------------------------------------------------------------


def validate(path: Path | None, obj: Any, s: Structural | None, is_resource_root: bool) -> ErrorList:
    """``objectmeta.Validate``: apiVersion/kind/metadata checks of embedded resources."""
    if is_resource_root:
        s = as_resource_root(s)
    return _validate(path, obj, s)


def _validate(path: Path | None, x: Any, s: Structural | None) -> ErrorList:
    if s is None or not has_embedded(s):
        return []
    errs: ErrorList = []
    if isinstance(x, dict):
        if s.x_embedded_resource:
            errs += _validate_embedded(path, x)
        props = s.properties or {}
        for k, v in x.items():
            prop = props.get(k)
            if prop is not None:
                if has_embedded(prop):
                    errs += _validate(field.child_of(path, k), v, prop)
            elif s.additional_properties is not None and has_embedded(s.additional_properties.structural):
                errs += _validate(_key(path, k), v, s.additional_properties.structural)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            errs += _validate(_index(path, i), v, s.items)
    return errs


def parse_group_version_error(api_version: str) -> str | None:
    """``schema.ParseGroupVersion``'s error, or None."""
    return None if parse_group_version(api_version) is not None else f"unexpected GroupVersion string: {api_version}"


def _validate_embedded(path: Path | None, x: dict[str, Any]) -> ErrorList:
    errs: ErrorList = []
    for name in ("apiVersion", "kind"):
        if name not in x:
            errs.append(field.required(field.child_of(path, name), ""))
    for k, v in x.items():
        if k == "apiVersion":
            errs += _check_api_version(field.child_of(path, k), v)
        elif k == "kind":
            errs += _check_kind(field.child_of(path, k), v)
        elif k == "metadata":
            errs += _check_metadata(field.child_of(path, k), x, v)
    return errs


def _check_api_version(path: Path, v: Any) -> ErrorList:
    if not isinstance(v, str):
        return [field.invalid(path, v, "must be a string")]
    if not v:
        return [field.invalid(path, v, "must not be empty")]
    err = parse_group_version_error(v)
    return [field.invalid(path, v, err)] if err else []


def _check_kind(path: Path, v: Any) -> ErrorList:
    if not isinstance(v, str):
        return [field.invalid(path, v, "must be a string")]
    if not v:
        return [field.invalid(path, v, "must not be empty")]
    msgs = is_dns1035_label(v.lower())
    if msgs:
        return [field.invalid(path, v, "may have mixed case, but should otherwise match: " + ",".join(msgs))]
    return []


def _check_metadata(path: Path, x: dict[str, Any], v: Any) -> ErrorList:
    try:
        meta, _, _ = get_object_meta(x)
    except MetaDecodeError as err:
        return [field.invalid(path, v, str(err))]
    meta = dict(meta or {})
    if not meta.get("name"):
        meta["name"] = "fakename"  # upstream sets something to avoid the name error
    return validate_object_meta(meta, bool(meta.get("namespace")), validate_path_segment_name, path)
