"""Decoding `application/vnd.kubernetes.protobuf` bodies into plain objects.

kubectl and client-go send built-in objects as protobuf: the magic `k8s\\x00`, then a runtime.Unknown
{typeMeta, raw}; `raw` is the object's message as k8s.io/api's generated.proto defines it. Messages
are described in a compact notation, one line each, field numbers from those .proto files:

    ConfigMap: metadata=1:ObjectMeta immutable=4:bool? data=2:map<string> binaryData=3:map<bytes>

`?` marks a Go pointer (present even when zero); other zero scalars are dropped, as Go's JSON
`omitempty` would. `[]` marks a repeated field. `^` marks an embedded Go struct (`json:",inline"`,
like Volume's VolumeSource): its fields join the enclosing object's. Well-known types (Time,
Quantity...) become their JSON form."""

from __future__ import annotations

import base64
import datetime
import struct
from dataclasses import dataclass
from typing import Any

import orjson

from . import errors

MAGIC = b"k8s\x00"
SCALARS = frozenset({"string", "bytes", "bool", "int32", "int64", "double", "float"})


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: str
    repeated: bool
    pointer: bool
    inline: bool = False


MESSAGES: dict[str, dict[int, Field]] = {}
KINDS: dict[tuple[str, str], str] = {}  # (apiVersion, kind) -> message


def define(notation: str) -> None:
    """Adds messages written in the notation above (one per line)."""
    for line in notation.strip().splitlines():
        name, _, body = line.partition(":")
        fields: dict[int, Field] = {}
        for spec in body.split():
            field_name, _, rest = spec.partition("=")
            number, _, ftype = rest.partition(":")
            inline = ftype.endswith("^")
            ftype = ftype.removesuffix("^")
            pointer = ftype.endswith("?")
            ftype = ftype.rstrip("?")
            repeated = ftype.endswith("[]")
            fields[int(number)] = Field(field_name, ftype.removesuffix("[]"), repeated, pointer, inline)
        MESSAGES[name.strip()] = fields


def register_kind(api_version: str, kind: str, message: str | None = None) -> None:
    KINDS[(api_version, kind)] = message or kind


def has_kind(api_version: str, kind: str) -> bool:
    return (api_version, kind) in KINDS


# ---- the wire format ----

def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("unexpected EOF")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint overflow")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("unexpected EOF")
            value, pos = data[pos:pos + length], pos + length
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"illegal wireType {wire}")
        out.append((number, wire, value))
    return out


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _scalar(ftype: str, wire: int, value: Any) -> Any:
    if ftype == "string":
        return value.decode("utf-8")
    if ftype == "bytes":
        return base64.b64encode(value).decode()
    if ftype == "bool":
        return bool(value)
    if ftype == "int32":
        return _signed(value & 0xFFFFFFFF, 32)
    if ftype == "int64":
        return _signed(value, 64)
    if ftype == "double":
        return struct.unpack("<d", value)[0]
    return struct.unpack("<f", value)[0]


# ---- well-known types ----

def _time(data: bytes, micro: bool) -> str | None:
    seconds = nanos = 0
    for number, _, value in _fields(data):
        if number == 1:
            seconds = _signed(value, 64)
        elif number == 2:
            nanos = _signed(value & 0xFFFFFFFF, 32)
    if not seconds and not nanos:
        return None
    when = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    if micro:
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(data: bytes) -> int | str:
    kind, int_val, str_val = 0, 0, ""
    for number, _, value in _fields(data):
        if number == 1:
            kind = value
        elif number == 2:
            int_val = _signed(value & 0xFFFFFFFF, 32)
        elif number == 3:
            str_val = value.decode()
    return str_val if kind == 1 else int_val


def _raw_json(data: bytes) -> Any:
    raw = next((v for n, _, v in _fields(data) if n == 1), b"")
    return orjson.loads(raw) if raw else None


def _duration(data: bytes) -> str:
    nanos = next((_signed(v, 64) for n, _, v in _fields(data) if n == 1), 0)
    seconds = nanos / 1e9
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{int(hours)}h" if hours else "") + (f"{int(minutes)}m" if hours or minutes else "")
    return text + (f"{secs:g}s")


WELL_KNOWN = {
    "Time": lambda d: _time(d, False),
    "MicroTime": lambda d: _time(d, True),
    "Quantity": lambda d: next((v.decode() for n, _, v in _fields(d) if n == 1), "0"),
    "IntOrString": _int_or_string,
    "RawExtension": _raw_json,
    "FieldsV1": _raw_json,
    "Duration": _duration,
}


# ---- messages ----

def _value(ftype: str, wire: int, value: Any) -> Any:
    if ftype in SCALARS:
        return _scalar(ftype, wire, value)
    if ftype in WELL_KNOWN:
        return WELL_KNOWN[ftype](value)
    return decode_message(ftype, value)


def _map_entry(value_type: str, data: bytes) -> tuple[str, Any]:
    key, val = "", "" if value_type in ("string", "bytes") else None
    for number, wire, raw in _fields(data):
        if number == 1:
            key = raw.decode()
        elif number == 2:
            val = _value(value_type, wire, raw)
    return key, val


def _is_zero(value: Any) -> bool:
    return value is None or value == "" or value == 0 or value is False or value == [] or value == {}


def decode_message(name: str, data: bytes) -> dict[str, Any]:
    descriptor = MESSAGES.get(name)
    if descriptor is None:
        raise ValueError(f"no protobuf description of {name}")
    out: dict[str, Any] = {}
    for number, wire, raw in _fields(data):
        spec = descriptor.get(number)
        if spec is None:
            continue  # unknown fields are dropped, as the generated Go code does
        if spec.type.startswith("map<"):
            key, val = _map_entry(spec.type[4:-1], raw)
            out.setdefault(spec.name, {})[key] = val
        elif spec.repeated:
            if wire == 2 and spec.type in ("int32", "int64", "bool"):
                out.setdefault(spec.name, []).extend(
                    _scalar(spec.type, 0, v) for v in _packed_varints(raw))
            else:
                out.setdefault(spec.name, []).append(_value(spec.type, wire, raw))
        elif spec.inline:
            out.update(_value(spec.type, wire, raw))
        else:
            out[spec.name] = _value(spec.type, wire, raw)
    for spec in descriptor.values():
        if spec.name in out and not spec.pointer and _is_zero(out[spec.name]):
            del out[spec.name]
    return out


def _packed_varints(data: bytes) -> list[int]:
    values, pos = [], 0
    while pos < len(data):
        value, pos = _varint(data, pos)
        values.append(value)
    return values


def decode(body: bytes, accepted: list[str]) -> dict[str, Any]:
    """A protobuf request body as an object with apiVersion and kind."""
    if not body.startswith(MAGIC):
        raise errors.bad_request("provided data does not appear to be a protobuf message, expected prefix "
                                 "[107 56 115 0]")
    try:
        envelope = {n: v for n, _, v in _fields(body[len(MAGIC):])}
        type_meta = {n: v.decode() for n, _, v in _fields(envelope.get(1, b""))}
        api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
        message = KINDS.get((api_version, kind))
        if message is None:
            raise errors.unsupported_media_type("application/vnd.kubernetes.protobuf",
                                                [m for m in accepted if "protobuf" not in m])
        obj = decode_message(message, envelope.get(2, b""))
    except (ValueError, UnicodeDecodeError, struct.error) as err:
        raise errors.bad_request(f"unable to decode protobuf body: {err}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}


define("""
TypeMeta: apiVersion=1:string kind=2:string
ObjectMeta: name=1:string generateName=2:string namespace=3:string selfLink=4:string uid=5:string resourceVersion=6:string generation=7:int64 creationTimestamp=8:Time deletionTimestamp=9:Time? deletionGracePeriodSeconds=10:int64? labels=11:map<string> annotations=12:map<string> ownerReferences=13:OwnerReference[] finalizers=14:string[] managedFields=17:ManagedFieldsEntry[]
ListMeta: selfLink=1:string resourceVersion=2:string continue=3:string remainingItemCount=4:int64?
OwnerReference: apiVersion=5:string kind=1:string name=3:string uid=4:string controller=6:bool? blockOwnerDeletion=7:bool?
ManagedFieldsEntry: manager=1:string operation=2:string apiVersion=3:string time=4:Time? fieldsType=6:string fieldsV1=7:FieldsV1? subresource=8:string
Preconditions: uid=1:string? resourceVersion=2:string?
DeleteOptions: gracePeriodSeconds=1:int64? preconditions=2:Preconditions? orphanDependents=3:bool? propagationPolicy=4:string? dryRun=5:string[] ignoreStoreReadErrorWithClusterBreakingPotential=6:bool?
LabelSelector: matchLabels=1:map<string> matchExpressions=2:LabelSelectorRequirement[]
LabelSelectorRequirement: key=1:string operator=2:string values=3:string[]
FieldSelectorRequirement: key=1:string operator=2:string values=3:string[]
ExtraValueItems: items=1:string[]
""")
# A user's ExtraValue (authentication, authorization, certificates) is a message holding a list; JSON has
# the bare list.
WELL_KNOWN["ExtraValue"] = lambda data: decode_message("ExtraValueItems", data).get("items", [])
for _version in ("v1", "meta.k8s.io/v1"):
    register_kind(_version, "DeleteOptions")


# ---- writing the wire format ----

def encode_varint(value: int) -> bytes:
    """A varint; negative numbers as their 64-bit two's complement (int64 fields)."""
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def varint_field(number: int, value: int) -> bytes:
    """A varint field (wire type 0): int32, int64, bool, enum."""
    return encode_varint(number << 3) + encode_varint(value)


def bytes_field(number: int, data: bytes) -> bytes:
    """A length-delimited field (wire type 2): string, bytes, an embedded message."""
    return encode_varint(number << 3 | 2) + encode_varint(len(data)) + data


def double_field(number: int, value: float) -> bytes:
    """A 64-bit field (wire type 1) holding a double."""
    return encode_varint(number << 3 | 1) + struct.pack("<d", value)
