"""Encoding and decoding of objects: JSON (orjson) and YAML (PyYAML's C implementation)."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import yaml

from . import deepjson, errors, yamllimits

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

# What the server says it accepts (kube-apiserver lists protobuf too; we answer it with 415/406).
SUPPORTED_MEDIA_TYPES = [JSON, YAML, PROTOBUF]

_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YamlDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# Go's encoding/json writes these escaped (HTML-safe; JS line separators); in JSON they occur only
# inside strings, so replacing the bytes is exact.
_GO_ESCAPES = ((b"&", b"\\u0026"), (b"<", b"\\u003c"), (b">", b"\\u003e"),
               ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def go_escaped(data: bytes) -> bytes:
    for raw, escaped in _GO_ESCAPES:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def encode_json(obj: Any, pretty: bool = False) -> bytes:
    """JSON as kube-apiserver writes it: Go's json.Encoder ends each value with a newline; the pretty
    form is json.MarshalIndent's, which does not. Both escape <, >, & and U+2028/U+2029."""
    if pretty:
        return go_escaped(deepjson.dumps(obj, option=orjson.OPT_INDENT_2))
    return go_escaped(deepjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE))


def encode_yaml(obj: Any) -> bytes:
    return yaml.dump(obj, Dumper=_YamlDumper, default_flow_style=False, sort_keys=True,
                     allow_unicode=True).encode()


def decode_json(body: bytes) -> Any:
    try:
        return deepjson.loads(body)
    except deepjson.TooDeep as err:
        raise errors.bad_request(f"error decoding request body: {err}") from err  # the cause: for decode.py
    except orjson.JSONDecodeError as err:
        raise errors.bad_request(f"error decoding request body: {err}") from None


# A JSON document (YAML's flow style) nested deeper than this is read as JSON: libyaml rechecks every open flow
# level's possible simple key at each token, so its time grows with the square of the depth (seconds for a few
# thousand levels, on the event loop) while a JSON parser's is linear.
JSON_FAST_PATH_DEPTH = 512
_YAML_READS_OTHERWISE = re.compile(rb"NaN|Infinity|\\u[dD][89a-fA-F]|\x7f|\xc2[\x80-\x84\x86-\x9f]|\xef\xbf[\xbe\xbf]")
_EXPONENT = re.compile(rb"[0-9.][eE]")
_STARTS_OBJECT = re.compile(rb"[ \t\r\n]*\{")


def decode_yaml(body: bytes) -> Any:
    try:
        deep_json = _deep_json(body) or _shallow_json(body)
        if deep_json is not None:
            return deep_json[0]
        yamllimits.check(body)  # before PyYAML builds what Go would refuse to
        return yaml.load(body, Loader=_YamlLoader)
    except yamllimits.YAMLLimitError as err:
        raise errors.bad_request(f"error converting YAML to JSON: {err}") from err  # the cause: for decode.py
    except yaml.YAMLError as err:
        raise errors.bad_request(f"error converting YAML to JSON: {err}") from None


def _deep_json(body: bytes) -> tuple[Any] | None:
    """(the document,) for a JSON object nested deeper than JSON_FAST_PATH_DEPTH and no deeper than yaml.v2
    accepts; None for anything else (YAML's reading and errors apply). A document PyYAML would read otherwise
    stays YAML too: numbers with an exponent (YAML 1.1 floats need a dot and a signed exponent), NaN and
    Infinity (strings to YAML), escaped surrogates and characters YAML does not accept unescaped. JSON nested
    deeper than yaml.v2 accepts raises its YAMLLimitError, as YAML's reading would after seconds of it."""
    if body.count(b"{") + body.count(b"[") <= JSON_FAST_PATH_DEPTH or not _STARTS_OBJECT.match(body):
        return None  # most bodies: too few brackets to be that deep, found without a copy or a scan in Python
    if _YAML_READS_OTHERWISE.search(body):
        return None
    unquoted = deepjson.outside_strings(body)
    depth = deepjson.nesting(unquoted)
    if _EXPONENT.search(unquoted) or depth <= JSON_FAST_PATH_DEPTH:
        return None
    try:
        if depth > yamllimits.MAX_DEPTH:
            json.loads(body)  # JSON (so YAML would not stop before the depth): the depth is its error
            raise yamllimits.YAMLLimitError(_too_deep(body))
        return (deepjson.loads(body),)
    except ValueError as err:  # not JSON after all (orjson.JSONDecodeError is one too): YAML's reading
        if isinstance(err, yamllimits.YAMLLimitError):
            raise
        return None


# An integer of 19 digits or more: past 64 bits, orjson reads it as a float where YAML keeps every digit.
_LONG_INTEGER = re.compile(rb"[0-9]{19,}")


def _shallow_json(body: bytes) -> tuple[Any] | None:
    """(the document,) for a JSON object of at most JSON_FAST_PATH_DEPTH brackets that YAML would read the same
    (the conditions of _deep_json, and no integer orjson reads otherwise); None for anything else. Clients send
    server-side apply configurations as JSON (client-go's Apply, the server's own controllers): orjson reads
    them ~50 times faster than PyYAML, whose reading of a JSON document gives the same objects."""
    if not _STARTS_OBJECT.match(body) or body.count(b"{") + body.count(b"[") > JSON_FAST_PATH_DEPTH:
        return None
    if _YAML_READS_OTHERWISE.search(body):
        return None
    unquoted = deepjson.outside_strings(body)
    if _EXPONENT.search(unquoted) or _LONG_INTEGER.search(unquoted):
        return None
    try:
        return (orjson.loads(body),)
    except orjson.JSONDecodeError:
        return None  # not JSON: YAML's reading, and its errors


_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep(body: bytes) -> str:
    """yamllimits' message for the bracket of a JSON document that opens a level past MAX_DEPTH."""
    depth = 0
    for token in _JSON_TOKEN.finditer(body):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > yamllimits.MAX_DEPTH:
                line = body.count(b"\n", 0, token.start())
                where = f"line {line + 1}: " if line else ""
                return f"yaml: {where}exceeded max depth of {yamllimits.MAX_DEPTH}"
        elif bracket in (b"]", b"}"):
            depth -= 1
    return f"yaml: exceeded max depth of {yamllimits.MAX_DEPTH}"


def media_type_of(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def decode_body(body: bytes, content_type: str) -> Any:
    """Decode a request body by its Content-Type; the caller checks the result is an object."""
    media = media_type_of(content_type) if content_type else JSON
    if media in (JSON, "", "*/*"):
        return decode_json(body)
    if media in (YAML, "application/x-yaml", "text/yaml"):
        return decode_yaml(body)
    if media == PROTOBUF:
        from . import protobuf
        return protobuf.decode(body, SUPPORTED_MEDIA_TYPES)
    raise errors.unsupported_media_type(content_type, SUPPORTED_MEDIA_TYPES)
