"""Field validation (fieldValidation=Ignore|Warn|Strict): unknown and duplicate fields of a request.

Built-in kinds are decoded into Go structs. The strict decoders report `unknown field "spec.foo"` and
`duplicate field "metadata.name"` (JSON), or yaml's `line 5: key "name" already set in map`; the typed
decoding drops the unknown fields whatever the directive, and a duplicated field decodes twice into the
same Go value (structs and maps merge, the last scalar wins). Warn (the default) turns each error into a
warning, Strict rejects the request, Ignore says nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from . import errors
from . import field as fielderr
from .field import go_quote
from .openapischema import Node

STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
MAX_STRICT_ERRORS = 100  # sigs.k8s.io/json keeps no more
YAML_ERRORS = "yaml: unmarshal errors:\n"  # then each error on its own line, indented by two spaces
TYPE_META = ("apiVersion", "kind")
EMBEDDED = ("apiVersion", "kind", "metadata")

# A map[string]interface{} (a merge or strategic merge patch) and []jsonPatchOp: what patches decode into.
ANY = Node({"x-kubernetes-preserve-unknown-fields": True}, {})
JSON_PATCH_OPS = Node({"type": "array", "items": {"type": "object", "properties": {
    "op": {"type": "string"}, "path": {"type": "string"}, "from": {"type": "string"},
    "value": {"x-kubernetes-preserve-unknown-fields": True}}}}, {})


def shape(node: Node | None) -> str:
    """How a value of this schema decodes: struct, map, list, scalar, any (an interface{}: every key
    allowed, duplicates still reported) or opaque (a type with its own JSON decoding, e.g. RawExtension).
    Derived once per schema node, which lives as long as its kind's scope."""
    if node is None:
        return "any"
    return node.derived(shape, _shape)


def _shape(node: Node) -> str:
    if node.preserves_unknown_fields:
        return "any"
    if node.properties():
        return "struct"
    if node.int_or_string or "oneOf" in node.schema:
        return "opaque"
    if node.additional() is not None:
        return "map"
    kind = node.type
    if kind == "array":
        return "list"
    return "opaque" if kind in ("object", "") else "scalar"


def _known(node: Node, key: str, root: bool) -> Node | None | bool:
    """The schema of a struct's field; True for fields known without one; False for unknown fields."""
    if key in node.properties():
        return node.child(key)  # memoized: resolved once per schema node, not on every request
    return (root and key in TYPE_META) or (node.embedded_resource and key in EMBEDDED)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# ---- unknown fields ----

@dataclass(frozen=True)
class _Walk:
    sort_keys: bool
    map_keys: bool
    prune: bool


def unknown_fields(obj: Any, schema: Node | None, *, sort_keys: bool = False, map_keys: bool = True,
                   prune: bool = False) -> list[str]:
    """The paths of the fields the schema does not know, in document order (keys sorted with sort_keys,
    as Go re-encodes maps); map keys are part of the paths unless map_keys is False (the unstructured
    converter's paths). With prune the fields are removed too."""
    found: list[str] = []
    _walk(obj, schema, "", found, _Walk(sort_keys, map_keys, prune), root=True)
    return found


OBJECT_META = {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}


def custom_resource_unknown_fields(obj: Any, schema: Node | None) -> list[str]:
    """A custom resource's unknown fields in the order its decoder lists them (apiextensions'
    unstructuredSchemaCoercer.apply): its metadata's, then the pruned paths sorted, then those of
    embedded resources' metadata."""
    found = unknown_fields(obj, schema, sort_keys=True)
    own = [path for path in found if path.startswith("metadata.")]
    embedded: list[str] = []
    if schema is not None:
        _embedded_metadata(obj, schema, "", embedded)
    return own + sorted(path for path in found if not path.startswith("metadata.")) + embedded


def _embedded_metadata(value: Any, node: Node, path: str, found: list[str]) -> None:
    """The unknown metadata fields of every x-kubernetes-embedded-resource object (objectmeta.Coerce)."""
    if isinstance(value, list) and (items := node.items()) is not None:
        for i, item in enumerate(value):
            _embedded_metadata(item, items, f"{path}[{i}]", found)
    if not isinstance(value, dict):
        return
    if node.embedded_resource and isinstance(value.get("metadata"), dict):
        meta = Node.of(OBJECT_META, node.definitions)
        _walk(value["metadata"], meta, _join(path, "metadata"), found, _Walk(True, True, False))
    props, extra = node.properties(), node.additional()
    for key, child in value.items():
        if key in props and (sub := Node.of(props[key], node.definitions)) is not None:
            _embedded_metadata(child, sub, _join(path, key), found)
        elif key not in props and extra is not None:
            _embedded_metadata(child, extra, f"{path}[{key}]", found)


def prune_unknown_fields(obj: Any, schema: Node | None) -> None:
    """Drops what Go's typed decoding drops: the fields the schema does not know."""
    unknown_fields(obj, schema, prune=True)


def _walk(value: Any, node: Node | None, path: str, found: list[str], how: _Walk, root: bool = False) -> None:
    kind = shape(node)
    if kind in ("any", "opaque", "scalar") or node is None:
        return
    if kind == "list":
        items = node.items()
        if isinstance(value, list) and shape(items) in ("struct", "map", "list"):
            for i, item in enumerate(value):
                _walk(item, items, f"{path}[{i}]", found, how)
        return
    if not isinstance(value, dict):
        return
    keys = sorted(value) if how.sort_keys else list(value)
    if kind == "map":
        extra = node.additional()
        if shape(extra) in ("struct", "map", "list"):
            for key in keys:
                _walk(value[key], extra, _join(path, key) if how.map_keys else path, found, how)
        return
    for key in keys:
        child = _known(node, key, root)
        if child is False:
            found.append(_join(path, key))
            if how.prune:
                del value[key]
        elif isinstance(child, Node):
            _walk(value[key], child, _join(path, key), found, how)


# ---- duplicate fields ----

_QUOTE_OR_ESCAPE = re.compile(rb'\\.|"', re.DOTALL)


def may_have_duplicates(body: bytes, decoded: Any) -> bool:
    """Whether a JSON body repeats a key: a decoder that keeps the last value drops the repeated key
    (and the strings of the dropped value), so the body then has more strings than the result."""
    return body_strings(body) != _count_strings(decoded)


def body_strings(body: bytes) -> int:
    """How many strings (keys included) a JSON body holds: its unescaped quotes, halved."""
    if b"\\" in body:
        quotes = sum(1 for m in _QUOTE_OR_ESCAPE.finditer(body) if m.group() == b'"')
    else:
        quotes = body.count(b'"')
    return quotes // 2


def _count_strings(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count_strings(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_strings(v) for v in value)
    return 1 if isinstance(value, str) else 0


class _Pairs(list):
    """A JSON object as its key/value pairs, duplicates included."""


def decode_strict_json(body: bytes, schema: Node | None) -> tuple[Any, list[str]]:
    """kjson.UnmarshalStrict into the schema's type: the decoded value as Go has it (unknown fields
    dropped, duplicates merged) and the strict errors, in document order."""
    pairs = json.loads(body, object_pairs_hook=_Pairs)
    found: list[str] = []
    value = _decode(pairs, schema, "", found, root=True)
    return value, _dedupe(found)


def _dedupe(found: list[str]) -> list[str]:
    return list(dict.fromkeys(found))[:MAX_STRICT_ERRORS]


def _decode(value: Any, node: Node | None, path: str, found: list[str], root: bool = False) -> Any:
    kind = shape(node)
    if kind in ("opaque", "scalar"):
        return _plain(value)
    node = node or ANY
    if isinstance(value, _Pairs):
        if kind == "struct":
            return _decode_struct(value, node, path, found, root)
        if kind == "list":
            return _plain(value)
        extra = node.additional() if kind == "map" else ANY
        out: dict[str, Any] = {}
        for key, item in value:
            if key in out:
                found.append(f'duplicate field "{_join(path, key)}"')
            out[key] = _decode(item, extra, _join(path, key), found)
        return out
    if isinstance(value, list):
        items = node.items() if kind == "list" else ANY if kind == "any" else None
        if items is None:
            return _plain(value)
        return [_decode(v, items, f"{path}[{i}]", found) for i, v in enumerate(value)]
    return value


def _decode_struct(pairs: _Pairs, node: Node, path: str, found: list[str], root: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in pairs:
        child = _known(node, key, root)
        if child is False:
            found.append(f'unknown field "{_join(path, key)}"')
            continue
        if key in out:
            found.append(f'duplicate field "{_join(path, key)}"')
        schema = child if isinstance(child, Node) else ANY
        decoded = _decode(item, schema, _join(path, key), found)
        out[key] = _go_merge(out[key], decoded, schema) if key in out else decoded
    return out


def _go_merge(old: Any, new: Any, node: Node | None) -> Any:
    """Decoding a repeated field into the Go value the first one filled."""
    kind = shape(node)
    if kind == "struct" and node is not None and isinstance(old, dict) and isinstance(new, dict):
        props = node.properties()
        merged = dict(old)
        for key, value in new.items():
            child = Node.of(props[key], node.definitions) if key in props else None
            merged[key] = _go_merge(old[key], value, child) if key in old else value
        return merged
    if kind == "map" and isinstance(old, dict) and isinstance(new, dict):
        return {**old, **new}
    if kind == "list" and node is not None and isinstance(old, list) and isinstance(new, list):
        items = node.items()
        return [_go_merge(old[i], v, items) if i < len(old) else v for i, v in enumerate(new)]
    return new


def _plain(value: Any) -> Any:
    if isinstance(value, _Pairs):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


_YamlLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def yaml_duplicates(body: bytes) -> str:
    """yaml.v2's strict error for keys repeated in a YAML document ("" when none is)."""
    loader = _YamlLoader(body)
    try:
        root = loader.get_single_node()
        lines: list[str] = []
        if root is not None:
            _yaml_walk(root, loader, lines, set())
    except yaml.YAMLError:
        return ""
    finally:
        loader.dispose()
    return YAML_ERRORS + "\n".join(f"  {line}" for line in lines) if lines else ""


def _yaml_walk(node: yaml.Node, loader: Any, lines: list[str], seen_nodes: set[int]) -> None:
    if id(node) in seen_nodes:
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _yaml_walk(item, loader, lines, seen_nodes)
    elif isinstance(node, yaml.MappingNode):
        keys: set[tuple[str, str]] = set()
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            _yaml_walk(value_node, loader, lines, seen_nodes)
            key = loader.construct_object(key_node, deep=True)
            identity = (type(key).__name__, repr(key))
            if identity in keys:
                lines.append(f"line {value_node.start_mark.line + 1}: key {_go_sharp_v(key)} already set in map")
            keys.add(identity)


def _go_sharp_v(key: Any) -> str:
    if isinstance(key, str):
        return go_quote(key)
    if key is None:
        return "<nil>"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


# ---- the directive ----

def apply_field_validation(directive: str, strict_errors: list[str], warnings: list[str],
                           reject: Callable[[str], errors.StatusError] = errors.bad_request) -> None:
    """Strict: raises reject("strict decoding error: ..."); Warn (or no directive): one warning per
    error (yaml's errors one per line); Ignore: nothing."""
    if not strict_errors or directive == IGNORE:
        return
    if directive == STRICT:
        raise reject("strict decoding error: " + ", ".join(strict_errors))
    for err in strict_errors:
        for text in _warning_texts(err):
            if text not in warnings:
                warnings.append(text)


def _warning_texts(err: str) -> list[str]:
    """parseYAMLWarnings: one warning per line of a yaml strict error."""
    if not err.startswith(YAML_ERRORS):
        return [err]
    return [line.strip() for line in err[len(YAML_ERRORS):].split("\n")]


def _unknown_errors(paths: list[str]) -> list[str]:
    return [f'unknown field "{path}"' for path in paths]


def report_unknown_fields(directive: str, paths: list[str], warnings: list[str],
                          reject: Callable[[str], errors.StatusError], earlier: Sequence[str] = (),
                          sort: bool = False) -> None:
    """The unknown fields of a decoded object (after the `earlier` errors), per the directive; with sort,
    in the order of their errors' texts (the unstructured converter's)."""
    found = _unknown_errors(paths)
    if sort:
        found.sort()
    apply_field_validation(directive, [*earlier, *_dedupe(found)], warnings, reject)


# ---- requests ----

def check_request_object(directive: str, body: bytes, body_format: str, obj: dict[str, Any], schema: Node,
                         warnings: list[str], reject: Callable[[str], errors.StatusError],
                         custom_resource: bool = False, repeated_keys: bool | None = None) -> dict[str, Any]:
    """Create and update: the strict decoding of a JSON or YAML body. Returns the object as Go decodes
    it (unknown fields dropped, duplicated fields merged); reports the strict errors per the directive.
    `repeated_keys`: may_have_duplicates(body, obj) as told before `obj` was changed, if it was."""
    if custom_resource and body_format in ("json", "yaml"):
        # decoded as unstructured: the decoder's duplicates, then the schema's unknown fields
        if body_format == "yaml":
            duplicates = yaml_duplicates(body) if directive != IGNORE else ""
            found = [duplicates] if duplicates else []
        elif may_have_duplicates(body, obj):
            obj, found = decode_strict_json(body, ANY)
        else:
            found = []
        found += _unknown_errors(custom_resource_unknown_fields(obj, schema))
        apply_field_validation(directive, found, warnings, reject)
        prune_unknown_fields(obj, schema)
        return obj
    if body_format == "yaml":
        duplicates = yaml_duplicates(body) if directive != IGNORE else ""
        found = [duplicates] if duplicates else []
        # YAML reaches the JSON decoder re-encoded by Go, with each object's keys sorted.
        found += _dedupe(_unknown_errors(unknown_fields(obj, schema, sort_keys=True, prune=True)))
    elif body_format == "json":
        if repeated_keys if repeated_keys is not None else may_have_duplicates(body, obj):
            obj, found = decode_strict_json(body, schema)
        else:
            found = _dedupe(_unknown_errors(unknown_fields(obj, schema, prune=True)))
    else:
        return obj
    apply_field_validation(directive, found, warnings, reject)
    return obj


def patch_body_errors(body: bytes, decoded: Any, json_patch: bool) -> list[str]:
    """The strict errors of a patch itself: duplicate keys of a merge or strategic merge patch, unknown
    and duplicate fields of a JSON patch's operations (`json patch unknown field "[0].foo"`)."""
    schema = JSON_PATCH_OPS if json_patch else ANY
    if may_have_duplicates(body, decoded):
        found = decode_strict_json(body, schema)[1]
    else:
        found = _dedupe(_unknown_errors(unknown_fields(decoded, schema)))
    return [f"json patch {err}" for err in found] if json_patch else found


def check_patched_object(directive: str, patched: dict[str, Any], schema: Node, strategic: bool,
                         body_errors: list[str], warnings: list[str],
                         reject: Callable[[str], errors.StatusError], custom_resource: bool = False) -> None:
    """Patch: the patched object's unknown fields are reported (after the patch's own errors), then
    dropped. A strategic merge result goes through the unstructured converter (errors sorted, no map
    keys in paths); other patches through the JSON decoder, as Go re-encoded them (keys sorted)."""
    if custom_resource:
        found = _unknown_errors(custom_resource_unknown_fields(patched, schema))
    else:
        found = _unknown_errors(unknown_fields(patched, schema, sort_keys=not strategic, map_keys=not strategic))
    if strategic:
        found.sort()
    apply_field_validation(directive, body_errors + _dedupe(found), warnings, reject)
    if found:
        prune_unknown_fields(patched, schema)


def invalid_patch(value: str, message: str) -> errors.StatusError:
    """errors.NewInvalid(schema.GroupKind{}, "", {field.Invalid(field.NewPath("patch"), value, message)})."""
    err = fielderr.invalid(fielderr.Path("patch"), value, message)
    cause = {"reason": err.reason, "message": err.error_body(), "field": err.field}
    return errors.StatusError(422, "Invalid", f' "" is invalid: {err}', {"causes": [cause]})
