"""The storage codec: how an object becomes the value stored under its key, and back
(k8s.io/apiserver storage's codec: the storage serializer of --storage-media-type, and a decoder that
recognizes every serializer).

Values are read whatever they were written as: JSON, YAML, or kube-apiserver's protobuf envelope
(`k8s\\x00` + runtime.Unknown{typeMeta, raw}); so a store written by kube-apiserver, or written here under
another --storage-media-type, is read as it is. Values are written as the media type says; protobuf only
for kinds the generated message table knows (built-in kinds at their storage version): custom resources
and anything else are always JSON, as kube-apiserver stores them.

The stored apiVersion and kind are the object's own (the registry stores the storage version). An object's
resourceVersion is never stored (the key's revision is), as kube-apiserver's versioner clears it.

A protobuf value decodes to the object kube-apiserver would serve from it: Go's JSON encoder writes struct
fields even when empty (`status: {}`) and a zero metav1.Time as null, which the message (like Go's struct)
does not tell apart from absent; see `_go_json`. (A nil slice it writes as null is left out: see
`_when_absent`.)"""

from __future__ import annotations

import functools
import struct
from typing import TYPE_CHECKING, Any

import yaml

from ..apimachinery import deepjson, serializer
from ..apimachinery.protowire import MAGIC
from ..lazyimport import lazy_import
from .interface import Object, StorageError

if TYPE_CHECKING:
    from ..apimachinery import protobuf, protobuf_messages
else:
    # The message table costs its load at the first protobuf value read or written, not at every start.
    protobuf = lazy_import("kube_apiserver.apimachinery.protobuf")
    protobuf_messages = lazy_import("kube_apiserver.apimachinery.protobuf_messages")

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
MEDIA_TYPES = (JSON, YAML, PROTOBUF)
# JSON: a write and a read cost 15 to 35 times less than protobuf in Python (docs/storage-encoding.md).
DEFAULT_MEDIA_TYPE = JSON

_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
# Go's float64 JSON form is an integer's for whole numbers below 1e21 (strconv 'f' format, no ".0").
GO_FLOAT_AS_INT = 1e21


class UndecodableValueError(StorageError):
    """A stored value that none of the serializers reads (storage.NewCorruptObjError)."""

    def __init__(self, reason: str):
        super().__init__(f"data from the storage is not decodable: {reason}")


class StorageCodec:
    """Encodes values as `media_type`; decodes any of them. Immutable: one per store."""

    __slots__ = ("media_type", "_protobuf", "_yaml")

    def __init__(self, media_type: str = DEFAULT_MEDIA_TYPE):
        if media_type not in MEDIA_TYPES:
            raise ValueError(
                f"unsupported storage media type {media_type!r}, supported: {', '.join(MEDIA_TYPES)}"
            )
        self.media_type = media_type
        self._protobuf = media_type == PROTOBUF
        self._yaml = media_type == YAML

    def encode(self, obj: Object) -> bytes:
        meta = obj.get("metadata")
        if isinstance(meta, dict) and "resourceVersion" in meta:
            meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
            obj = {**obj, "metadata": meta}
        if self._protobuf and protobuf.has_kind(obj.get("apiVersion", ""), obj.get("kind", "")):
            return protobuf.encode(obj)
        if self._yaml:
            return serializer.encode_yaml(obj)
        return deepjson.dumps(obj)

    def decode(self, value: bytes, revision: int) -> Object:
        """The object stored as `value`, at `revision` (its resourceVersion)."""
        obj = decode_value(value)
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        meta["resourceVersion"] = str(revision)
        return obj


def decode_value(value: bytes) -> Object:
    """A stored value as its object, recognized by its first bytes as kube-apiserver's decoder does."""
    try:
        if value.startswith(MAGIC):
            return _decode_protobuf(value)
        if value[:1] == b"{":  # what every JSON value here starts with; anything else is also tried as YAML
            obj = deepjson.loads(value)
        else:
            obj = _decode_other(value)
    except (ValueError, struct.error, OverflowError, AttributeError, TypeError, yaml.YAMLError) as err:
        raise UndecodableValueError(str(err)) from None
    except RecursionError:
        raise UndecodableValueError("exceeded max depth") from None
    if not isinstance(obj, dict):
        raise UndecodableValueError("not an object")
    return obj


def _decode_other(value: bytes) -> Any:
    stripped = value.lstrip()
    if stripped[:1] in (b"{", b"["):
        return deepjson.loads(stripped)
    return yaml.load(value, Loader=_YamlLoader)  # noqa: S506 - the safe loader (C or Python)


def _decode_protobuf(value: bytes) -> Object:
    api_version, kind, raw = protobuf._envelope(value)  # noqa: SLF001 - the envelope reader, shared
    message = protobuf.message_of(api_version, kind)
    if message is None:
        raise ValueError(f"no kind {kind!r} is registered for version {api_version!r}")
    obj = protobuf.decode_message(message, raw)
    _go_json(message, obj)
    fixup = DECODE_FIXUPS.get(message)
    if fixup is not None:
        fixup(obj)
    return {"apiVersion": api_version, "kind": kind, **obj}


# ---- what Go's JSON encoder writes for the fields a message leaves out ----


@functools.cache
def _fill_plan(name: str) -> tuple[tuple[str, str, str, str, bool, bool], ...]:
    """The fields of a message the filling pass looks at: (JSON name, type, what is done when present, what
    is written when absent, repeated, is a map). Present: "fill" (a struct, filled in turn), "schema" (a
    JSONSchemaProps union: its schemas are filled), "float" (a double: Go writes whole numbers as integers).
    Absent: "struct" (a non-pointer struct: {}, then filled), "zero" (a non-pointer well-known type: its
    zero's JSON, null for a Time)."""
    plan = []
    for _number, json_name, ftype, flags in protobuf_messages.MESSAGES.get(name, ()):
        is_map = ftype.startswith("map<")
        value_type = ftype[4:-1].split(",", 1)[1] if is_map else ftype
        repeated, pointer = bool(flags & protobuf.REPEATED), bool(flags & protobuf.POINTER)
        if flags & protobuf.INLINE:
            plan.append((json_name, value_type, "inline", "", False, False))
            continue
        present = _when_present(value_type)
        absent = _when_absent(name, json_name, value_type, repeated or is_map, pointer)
        if present or absent:
            plan.append((json_name, value_type, present, absent, repeated, is_map))
    return tuple(plan)


def _when_present(value_type: str) -> str:
    if value_type == "double":
        return "float"
    if value_type in SCHEMA_UNIONS:
        return "schema"
    if value_type in protobuf.SCALARS or value_type in protobuf.WELL_KNOWN or value_type in protobuf.LISTS:
        return ""
    return "fill"


def _when_absent(message: str, json_name: str, value_type: str, many: bool, pointer: bool) -> str:
    if many or pointer or value_type in protobuf.SCALARS or value_type in protobuf.LISTS:
        # A scalar's zero is already there when Go writes it (the table's keep_zero). A nil slice or map Go
        # writes as null (no omitempty) stays absent: this server's code reads absent and empty alike, and
        # a null where it appends or iterates would fail (upstream's Go appends to nil).
        return ""
    if value_type in protobuf.WELL_KNOWN:
        # metav1.ObjectMeta.creationTimestamp is `omitzero` (v1.34): the one zero Time Go leaves out.
        if (message, json_name) == (OBJECT_META, "creationTimestamp") or value_type in SCHEMA_UNIONS:
            return ""
        return "zero"
    return "struct"


APIEXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."
SCHEMA = APIEXTENSIONS + "JSONSchemaProps"
SCHEMA_UNIONS = frozenset(
    APIEXTENSIONS + name for name in ("JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool", "JSONSchemaPropsOrStringArray")
)


def _go_json(name: str, obj: dict[str, Any]) -> None:
    """Fills `obj`, decoded from message `name`, in place with what Go's JSON encoding of it writes."""
    for json_name, ftype, present, absent, repeated, is_map in _fill_plan(name):
        if present == "inline":
            _go_json(ftype, obj)
            continue
        value = obj.get(json_name)
        if value is None:
            if not absent:
                continue
            if absent == "zero":
                obj[json_name] = protobuf.WELL_KNOWN[ftype][0](b"")
                continue
            value = obj[json_name] = {}
        if present == "fill":
            _walk(ftype, value, repeated, is_map)
        elif present == "float":
            obj[json_name] = [_go_float(v) for v in value] if repeated else _go_float(value)
        elif present == "schema":
            _walk(SCHEMA, value, isinstance(value, list), False)


def _walk(name: str, value: Any, repeated: bool, is_map: bool) -> None:
    items = value.values() if is_map else value if repeated else (value,)
    for item in items:
        if isinstance(item, dict):
            _go_json(name, item)


def _go_float(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < GO_FLOAT_AS_INT:
        return int(value)
    return value


def _typed_claim_templates(spec: dict[str, Any]) -> None:
    """apps/v1 conversion (Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec) types every volumeClaimTemplate;
    the message, like the Go struct, has no TypeMeta to carry it."""
    for claim in spec.get("volumeClaimTemplates") or ():
        if isinstance(claim, dict):
            claim["apiVersion"], claim["kind"] = "v1", "PersistentVolumeClaim"


def _statefulset(obj: dict[str, Any]) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _typed_claim_templates(spec)


# What conversion out of the storage version adds to a decoded kind, by message.
DECODE_FIXUPS = {"k8s.io.api.apps.v1.StatefulSet": _statefulset}
