"""Encoding and decoding of objects: JSON (orjson) and YAML (PyYAML's C implementation)."""

from __future__ import annotations

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


def decode_yaml(body: bytes) -> Any:
    try:
        yamllimits.check(body)  # before PyYAML builds what Go would refuse to
        return yaml.load(body, Loader=_YamlLoader)
    except yamllimits.YAMLLimitError as err:
        raise errors.bad_request(f"error converting YAML to JSON: {err}") from err  # the cause: for decode.py
    except yaml.YAMLError as err:
        raise errors.bad_request(f"error converting YAML to JSON: {err}") from None


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
