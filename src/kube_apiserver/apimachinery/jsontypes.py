"""The type errors Go's JSON decoding reports when a request body does not fit the Go struct
(encoding/json UnmarshalTypeError, as sigs.k8s.io/json keeps them), for kinds described here:

    json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32

The struct named is the one holding the field; the field is the JSON path from the object's root."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any

INT_RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}
STRING_LISTS = ("[]string",)
STRING_MAPS = ("map[string]string",)


@dataclass(frozen=True)
class Struct:
    name: str  # as the error names the holder of a field ("ServicePort")
    go_type: str  # as the error names a value of this type ("v1.ServicePort")
    fields: dict[str, Any] = field(default_factory=dict)  # JSON name -> a Go type name, Struct or ListOf


@dataclass(frozen=True)
class ListOf:
    item: Struct

    @property
    def go_type(self) -> str:
        return f"[]{self.item.go_type}"


class TypeMismatch(Exception):
    pass


def value_kind(value: Any) -> str:
    """How Go's UnmarshalTypeError names a JSON value: string, number, bool, array, object."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def number_error(value: Any, go_type: str) -> str | None:
    """What the error says a value is when it does not fit an integer type, or None when it fits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value_kind(value)
    low, high = INT_RANGES[go_type]
    if isinstance(value, float) and not value.is_integer() or not low <= value <= high:
        return f"number {value}"
    return None


def _scalar_error(value: Any, go_type: str) -> str | None:
    """What the error says the value was (`string`, `number 1.5`...), or None when it fits."""
    if go_type in INT_RANGES:
        return number_error(value, go_type)
    if go_type == "IntOrString":
        return None if isinstance(value, str) else number_error(value, "int32")
    if go_type == "string":
        return None if isinstance(value, str) else value_kind(value)
    if go_type == "bool":
        return None if isinstance(value, bool) else value_kind(value)
    if go_type in STRING_LISTS:
        if not isinstance(value, list):
            return value_kind(value)
        return next((value_kind(v) for v in value if v is not None and not isinstance(v, str)), None)
    if go_type in STRING_MAPS:
        if not isinstance(value, dict):
            return value_kind(value)
        return next((value_kind(v) for v in value.values() if v is not None and not isinstance(v, str)), None)
    return None


def _fail(value_text: str, holder: Struct, path: str, go_type: str) -> TypeMismatch:
    shown = "int32" if go_type == "IntOrString" else go_type
    return TypeMismatch(f"json: cannot unmarshal {value_text} into Go struct field {holder.name}.{path} of type {shown}")


def check(value: Any, struct: Struct, path: str = "") -> None:
    """Raises TypeMismatch for the first field whose JSON value does not fit its Go type."""
    if not isinstance(value, dict):
        return
    for key, go_type in struct.fields.items():
        item = value.get(key)
        if item is None:
            continue
        at = f"{path}.{key}" if path else key
        if isinstance(go_type, Struct):
            if not isinstance(item, dict):
                raise _fail(value_kind(item), struct, at, go_type.go_type)
            check(item, go_type, at)
        elif isinstance(go_type, ListOf):
            if not isinstance(item, list):
                raise _fail(value_kind(item), struct, at, go_type.go_type)
            for element in item:
                if element is not None and not isinstance(element, dict):
                    raise _fail(value_kind(element), struct, at, go_type.item.go_type)
                check(element, go_type.item, at)
        else:
            wrong = _scalar_error(item, go_type)
            if wrong is not None:
                # A wrong item of a list or map names the item's type, as Go's decoder fails on the item.
                whole = not isinstance(item, list | dict)
                raise _fail(wrong, struct, at, go_type if whole else go_type.rsplit("]", 1)[-1])


# ---- []byte fields: base64 as Go's encoding/base64 StdEncoding decodes it ----

_B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_CANONICAL = re.compile(rb"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_NEWLINES = b"\r\n"


class CorruptBase64(ValueError):
    """base64.CorruptInputError: the offset of the first byte Go refuses."""

    def __init__(self, offset: int):
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


def decode_base64(text: str) -> bytes:
    """The bytes of a JSON string decoded into a Go []byte: standard alphabet, padding required, CR and LF
    ignored anywhere (so wrapped base64 is accepted); anything else raises CorruptBase64 at Go's offset."""
    data = text.encode()
    if _B64_CANONICAL.fullmatch(data):
        return base64.b64decode(data)
    _check_quanta(data)
    return base64.b64decode(data.replace(b"\r", b"").replace(b"\n", b""))


def _check_quanta(src: bytes) -> None:
    """Go's decodeQuantum over the whole input: raises CorruptBase64 where Go would."""
    si = 0
    while si < len(src):
        j = 0
        while j < 4:
            if si == len(src):
                if j == 0:
                    return
                raise CorruptBase64(si - j)
            byte = src[si]
            si += 1
            if byte in _B64_ALPHABET:
                j += 1
                continue
            if byte in _NEWLINES:
                continue
            if byte != ord("=") or j < 2:
                raise CorruptBase64(si - 1)
            si = _check_padding(src, si, j)
            return


def _check_padding(src: bytes, si: int, j: int) -> int:
    """After the first '=' of a quantum of j symbols: the rest of the padding, then only newlines."""
    if j == 2:
        while si < len(src) and src[si] in _NEWLINES:
            si += 1
        if si == len(src):
            raise CorruptBase64(len(src))
        if src[si] != ord("="):
            raise CorruptBase64(si - 1)
        si += 1
    while si < len(src) and src[si] in _NEWLINES:
        si += 1
    if si < len(src):
        raise CorruptBase64(si)
    return si
