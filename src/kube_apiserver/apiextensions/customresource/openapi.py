"""A custom resource version's OpenAPI schemas (pkg/controller/openapi/builder): the CRD's structural
schema with apiVersion, kind and ObjectMeta filled in, and its List; they feed /openapi/v2 and v3,
kubectl explain, server-side apply and field validation."""

from __future__ import annotations

import copy
from typing import Any

from ...apimachinery.openapischema import REF, SchemaSource

Object = dict[str, Any]
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
API_VERSION_DOC = ("APIVersion defines the versioned schema of this representation of an object. Servers should "
                   "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
                   "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
                   "api-conventions.md#resources")
KIND_DOC = ("Kind is a string value representing the REST resource this object represents. Servers may infer "
            "this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
            "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds")
METADATA_DOC = ("Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
                "sig-architecture/api-conventions.md#metadata")
LIST_METADATA_DOC = ("Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/"
                     "sig-architecture/api-conventions.md#types-kinds")


def definition_name(group: str, version: str, kind: str) -> str:
    """The reversed group, as kube-openapi names definitions: stable.example.com -> com.example.stable."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _type_meta(schema: Object) -> None:
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": API_VERSION_DOC}
    props["kind"] = {"type": "string", "description": KIND_DOC}
    schema.setdefault("type", "object")


def object_schema(props: Object | None, group: str, version: str, kind: str) -> Object:
    schema = copy.deepcopy(props) if isinstance(props, dict) else {"type": "object",
                                                                    "x-kubernetes-preserve-unknown-fields": True}
    _type_meta(schema)
    schema["properties"]["metadata"] = {"allOf": [{"$ref": REF + OBJECT_META}], "description": METADATA_DOC}
    schema["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
    return schema


def list_schema(name: str, group: str, version: str, kind: str, list_kind: str) -> Object:
    schema: Object = {"description": f"{list_kind} is a list of {kind}", "type": "object", "required": ["items"]}
    _type_meta(schema)
    schema["properties"]["items"] = {
        "description": f"List of {kind.lower()}s. More info: https://git.k8s.io/community/contributors/devel/"
                       "sig-architecture/api-conventions.md#types-kinds",
        "type": "array", "items": {"$ref": REF + name}}
    schema["properties"]["metadata"] = {"allOf": [{"$ref": REF + LIST_META}], "description": LIST_METADATA_DOC}
    schema["x-kubernetes-group-version-kind"] = [{"group": group, "kind": list_kind, "version": version}]
    return schema


def own_definitions(props: Object | None, group: str, version: str, kind: str, list_kind: str) -> dict[str, Object]:
    """One custom resource version's definitions: its kind and its list."""
    name = definition_name(group, version, kind)
    return {name: object_schema(props, group, version, kind),
            definition_name(group, version, list_kind): list_schema(name, group, version, kind, list_kind)}


# ---- OpenAPI v2 (builder.go's opts.V2 and pkg/controller/openapi/v2 ToStructuralOpenAPIV2) ----

_JUNCTORS = ("allOf", "oneOf", "anyOf", "not")


def _structural_v2(schema: Object) -> Object:
    """ToStructuralOpenAPIV2 of one node and, recursively, its properties, items and additionalProperties:
    what kubectl's v2 validation cannot take (junctors, nullable, the content of preserve-unknown-fields
    nodes, arrays without items) is dropped."""
    out = {k: v for k, v in schema.items() if k not in _JUNCTORS}
    properties = out.get("properties") if isinstance(out.get("properties"), dict) else {}
    nullable_props = {name for name, sub in properties.items() if isinstance(sub, dict) and sub.get("nullable")}
    if out.pop("nullable", False):
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if out.get("x-kubernetes-preserve-unknown-fields") is True:
        out.pop("items", None)
        out.pop("properties", None)
    if out.get("type") == "array" and "items" not in out:
        out.pop("type")  # kubectl cannot cope with an array without an item schema
    if out.get("x-kubernetes-preserve-unknown-fields") is True and out.get("type") == "object":
        out.pop("type")
    if isinstance(out.get("required"), list) and nullable_props:
        out["required"] = [f for f in out["required"] if f not in nullable_props] or None
    additional = out.get("additionalProperties")
    if isinstance(additional, dict) and additional.get("nullable"):
        out["required"] = None
    if out.get("required") is None:
        out.pop("required", None)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _structural_v2(v) if isinstance(v, dict) else v for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _structural_v2(out["items"])
    if isinstance(additional, dict):
        out["additionalProperties"] = _structural_v2(additional)
    return out


def object_schema_v2(props: Object | None, group: str, version: str, kind: str) -> Object:
    """The kind's v2 definition. A schema preserving unknown fields at its root publishes only
    `type: object` (not even apiVersion, kind and metadata): kubectl would otherwise reject every field it
    does not list."""
    gvk = [{"group": group, "kind": kind, "version": version}]
    if not isinstance(props, dict) or props.get("x-kubernetes-preserve-unknown-fields") is True:
        return {"type": "object", "x-kubernetes-group-version-kind": gvk}
    return object_schema(_structural_v2(props), group, version, kind)


def own_definitions_v2(props: Object | None, group: str, version: str, kind: str,
                       list_kind: str) -> dict[str, Object]:
    """The kind's definition as /openapi/v2 publishes it (its list is the same in v2 and v3)."""
    return {definition_name(group, version, kind): object_schema_v2(props, group, version, kind)}


def schema_source(base: SchemaSource, own: dict[str, Object], own_v2: dict[str, Object] | None = None) -> SchemaSource:
    """The server's definitions (ObjectMeta and the rest) plus the custom resources' own."""
    index = {(gvk["group"], gvk["version"], gvk["kind"]): name for name, schema in own.items()
             for gvk in schema["x-kubernetes-group-version-kind"]}
    merged: dict[str, Object] = {}

    def definitions() -> dict[str, Object]:
        if not merged:
            merged.update(base.definitions())
            merged.update(own)
        return merged

    def name_of(group: str, version: str, kind: str) -> str | None:
        return index.get((group, version, kind)) or base.name_of(group, version, kind)

    return SchemaSource(definitions, name_of, lambda: own_v2 or {})
