"""PEM blocks as Go's encoding/pem decodes them (its exact leniencies), for the certificate checks of
CSRs and webhook CA bundles."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field

PEM_START, PEM_END, PEM_EOL = b"\n-----BEGIN ", b"\n-----END ", b"-----"


@dataclass
class Block:
    type: str
    headers: dict[str, str] = field(default_factory=dict)
    data: bytes = b""


def _line(data: bytes) -> tuple[bytes, bytes]:
    """getLine: the first line without trailing spaces/tabs/CR, and the rest."""
    i = data.find(b"\n")
    line, rest = (data, b"") if i < 0 else (data[:i], data[i + 1:])
    return line.rstrip(b" \t\r"), rest


def _after_start(rest: bytes) -> bytes | None:
    if rest.startswith(PEM_START[1:]):
        return rest[len(PEM_START) - 1:]
    i = rest.find(PEM_START)
    return None if i < 0 else rest[i + len(PEM_START):]


def _headers(rest: bytes) -> tuple[dict[str, str], bytes] | None:
    headers: dict[str, str] = {}
    while True:
        if not rest:
            return None
        line, following = _line(rest)
        key, colon, value = line.partition(b":")
        if not colon:
            return headers, rest
        headers[key.strip().decode(errors="replace")] = value.strip().decode(errors="replace")
        rest = following


def _body(type_line: bytes, headers: dict[str, str], rest: bytes) -> tuple[bytes, bytes] | None:
    """The block's decoded bytes and what follows its END line; None when malformed."""
    if not headers and rest.startswith(PEM_END[1:]):
        end, trailer_at = 0, len(PEM_END) - 1
    else:
        end = rest.find(PEM_END)
        trailer_at = end + len(PEM_END)
    if end < 0:
        return None
    trailer = rest[trailer_at:trailer_at + len(type_line) + len(PEM_EOL)]
    after = rest[trailer_at + len(type_line) + len(PEM_EOL):]
    if len(trailer) < len(type_line) + len(PEM_EOL) or trailer != type_line + PEM_EOL or _line(after)[0]:
        return None
    encoded = rest[:end].translate(None, b" \t\r\n")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data, _line(rest[end + len(PEM_END) - 1:])[1]


def decode(data: bytes) -> tuple[Block | None, bytes]:
    """pem.Decode: the first well-formed block and the data after it (None and the input if none)."""
    rest: bytes | None = data
    while True:
        rest = _after_start(rest) if rest is not None else None
        if rest is None:
            return None, data
        type_line, rest = _line(rest)
        if not type_line.endswith(PEM_EOL):
            continue
        type_line = type_line[:-len(PEM_EOL)]
        parsed = _headers(rest)
        if parsed is None:
            return None, data
        headers, rest = parsed
        body = _body(type_line, headers, rest)
        if body is not None:
            return Block(type_line.decode(errors="replace"), headers, body[0]), body[1]
