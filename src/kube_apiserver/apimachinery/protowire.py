"""The protobuf wire format: varints, tags and length-delimited fields (no message descriptions).

Kept apart from protobuf.py so that what only needs the wire format (the OpenAPI v2 document's protobuf
form) does not load the API's message table."""

from __future__ import annotations

import struct
from typing import Any

MAGIC = b"k8s\x00"  # before a runtime.Unknown: kube-apiserver's protobuf objects


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
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


def fields_of(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of each field; one-byte keys, lengths and varints read inline."""
    out: list[tuple[int, int, Any]] = []
    pos, size = 0, len(data)
    while pos < size:
        key = data[pos]
        if key < 0x80:
            pos += 1
        else:
            key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 2 or wire == 0:
            if pos < size and data[pos] < 0x80:
                value, pos = data[pos], pos + 1
            else:
                value, pos = read_varint(data, pos)
            if wire == 2:
                end = pos + value
                if end > size:
                    raise ValueError("unexpected EOF")
                value, pos = data[pos:end], end
        elif wire in (1, 5):
            end = pos + (8 if wire == 1 else 4)
            if end > size:
                raise ValueError("unexpected EOF")
            value, pos = data[pos:end], end
        else:
            raise ValueError(f"illegal wireType {wire}")
        out.append((number, wire, value))
    return out


_SMALL_VARINTS = tuple(bytes([n]) for n in range(0x80))


def encode_varint(value: int) -> bytes:
    """A varint; negative numbers as their 64-bit two's complement (int32 and int64 fields alike)."""
    if 0 <= value < 0x80:
        return _SMALL_VARINTS[value]
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
