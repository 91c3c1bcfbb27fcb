"""The upstream OpenAPI definitions of the built-in kinds (v1.34), from the kubernetes-validate
package, converted from its JSON Schema form back to OpenAPI v3 as kube-apiserver publishes them."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import orjson

KUBERNETES_VERSION = "v1.34.0"
Schema = dict[str, Any]
REF_PREFIX = "#/$defs/"
# Types whose JSON Schema form differs from what kube-apiserver publishes.
SPECIAL = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
                       "marshalling and unmarshalling, it produces or consumes the inner type.  This allows you "
                       "to have, for example, a JSON field that can accept a name or number.",
        "type": "string", "format": "int-or-string"},
}


def _convert(node: Any, under_properties: bool = False) -> Any:
    if isinstance(node, list):
        return [_convert(n) for n in node]
    if not isinstance(node, dict):
        return node
    if under_properties:
        return {k: _convert(v) for k, v in node.items()}
    out: Schema = {}
    for key, value in node.items():
        if key == "$ref":
            continue
        if key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            out["type"] = types[0] if len(types) == 1 else value
        elif key in ("properties", "patternProperties"):
            out[key] = _convert(value, under_properties=True)
        else:
            out[key] = _convert(value)
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF_PREFIX):
        target = {"$ref": "#/components/schemas/" + ref[len(REF_PREFIX):]}
        if out:
            out["allOf"] = [target]
            return out
        return target
    return out


def _strip_kind_enums(schema: Schema) -> Schema:
    """kubernetes-validate pins apiVersion and kind with enums; the published schemas do not."""
    props = schema.get("properties")
    if isinstance(props, dict):
        for key in ("apiVersion", "kind"):
            if isinstance(props.get(key), dict):
                props[key].pop("enum", None)
    return schema


def _schema_dir() -> Path:
    # The package's data files, without importing the package: its __init__ pulls in jsonschema (~0.1 s).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'kubernetes_validate'", name="kubernetes_validate")
    return Path(spec.submodule_search_locations[0]) / "kubernetes-json-schema" / f"{KUBERNETES_VERSION}-local"


@functools.cache
def definitions() -> dict[str, Schema]:
    raw = orjson.loads((_schema_dir() / "_definitions.json").read_bytes())["$defs"]
    converted = {name: _strip_kind_enums(_convert(schema)) for name, schema in raw.items()}
    converted.update(SPECIAL)
    return converted


@functools.cache
def kind_index() -> dict[tuple[str, str, str], str]:
    index = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            index.setdefault((gvk["group"], gvk["version"], gvk["kind"]), name)
    return index


def schema_name(group: str, version: str, kind: str) -> str | None:
    return kind_index().get((group, version, kind))
