"""Walking an OpenAPI v3 schema: the structure and x-kubernetes-* extensions at any path of an object.

Built-in kinds' schemas reference shared definitions (`$ref`, or `allOf: [{$ref}]` with siblings);
CRD schemas are inline. Patch merging, server-side apply and field validation all read schemas
through this one view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

Schema = dict[str, Any]
REF = "#/components/schemas/"
_ADDITIONAL, _ITEMS = object(), object()  # memo keys that no property name can be


@dataclass(frozen=True)
class Node:
    schema: Schema
    definitions: dict[str, Schema]
    definition: str = ""  # the definition this node was resolved from ("io.k8s.api.core.v1.PodSpec"), if any
    # Resolved children, memoized: a kind's root node lives as long as its scope, so each path of its
    # schema is resolved once, not on every request.
    _children: dict[object, Node | None] = field(default_factory=dict, compare=False, repr=False)
    _derived: dict[object, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, schema: Schema | None, definitions: dict[str, Schema]) -> Node | None:
        if not isinstance(schema, dict):
            return None
        resolved, name = _resolve(schema, definitions)
        return cls(resolved, definitions, name)

    # ---- structure ----

    @cached_property  # a pure function of the schema; nodes are reused across requests
    def type(self) -> str:
        kind = self.schema.get("type")
        if isinstance(kind, str):
            return kind
        if "properties" in self.schema or "additionalProperties" in self.schema:
            return "object"
        if "items" in self.schema:
            return "array"
        return ""

    def derived(self, key: object, build: Callable[[Node], Any]) -> Any:
        """build(self), computed once per key: what other layers derive from this node's schema (server-side
        apply's type of it and of its fields) is derived once too, not on every request."""
        if key not in self._derived:
            self._derived[key] = build(self)
        return self._derived[key]

    def _memo(self, key: object, schema: Any) -> Node | None:
        if key not in self._children:
            self._children[key] = Node.of(schema, self.definitions)
        return self._children[key]

    def child(self, name: str) -> Node | None:
        props = self.schema.get("properties")
        if isinstance(props, dict) and name in props:
            return self._memo(name, props[name])
        return self.additional()

    def properties(self) -> dict[str, Schema]:
        props = self.schema.get("properties")
        return props if isinstance(props, dict) else {}

    def additional(self) -> Node | None:
        extra = self.schema.get("additionalProperties")
        return self._memo(_ADDITIONAL, extra) if isinstance(extra, dict) else None

    def items(self) -> Node | None:
        return self._memo(_ITEMS, self.schema.get("items"))

    # ---- extensions ----

    @property
    def list_type(self) -> str | None:
        return self.schema.get("x-kubernetes-list-type")

    @property
    def list_map_keys(self) -> list[str]:
        return list(self.schema.get("x-kubernetes-list-map-keys") or [])

    @property
    def map_type(self) -> str | None:
        return self.schema.get("x-kubernetes-map-type")

    @property
    def patch_strategy(self) -> str:
        return self.schema.get("x-kubernetes-patch-strategy", "")

    @property
    def patch_merge_key(self) -> str:
        return self.schema.get("x-kubernetes-patch-merge-key", "")

    @cached_property  # a pure function of the schema; nodes are reused across requests
    def preserves_unknown_fields(self) -> bool:
        return bool(self.schema.get("x-kubernetes-preserve-unknown-fields"))

    @cached_property  # a pure function of the schema; nodes are reused across requests
    def int_or_string(self) -> bool:
        return bool(self.schema.get("x-kubernetes-int-or-string")) or self.schema.get("format") == "int-or-string"

    @property
    def embedded_resource(self) -> bool:
        return bool(self.schema.get("x-kubernetes-embedded-resource"))

    def at(self, path: tuple[str | int, ...]) -> Node | None:
        """The node at a path of property names and list indexes (ints)."""
        node: Node | None = self
        for step in path:
            if node is None:
                return None
            node = node.items() if isinstance(step, int) else node.child(step)
        return node


def _resolve(schema: Schema, definitions: dict[str, Schema]) -> tuple[Schema, str]:
    """Follows a $ref (or an allOf of one) and merges the referring schema's own keys over it; also
    returns the name of the last definition followed."""
    seen = 0
    name = ""
    while seen < 32:
        seen += 1
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            all_of = schema.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict) and "$ref" in all_of[0]:
                ref = all_of[0]["$ref"]
            else:
                return schema, name
        ref_name = ref[len(REF):] if ref.startswith(REF) else ref.rsplit("/", 1)[-1]
        target = definitions.get(ref_name)
        own = {k: v for k, v in schema.items() if k not in ("$ref", "allOf")}
        if target is None:
            return own, name
        name = ref_name
        schema = {**target, **own}
    return schema, name


@dataclass(frozen=True)
class SchemaSource:
    """All definitions, and which definition describes a kind."""

    definitions: Callable[[], dict[str, Schema]]
    name_of: Callable[[str, str, str], str | None]
    # Definitions that /openapi/v2 publishes differently from v3 (custom resources' kinds), by name.
    v2_definitions: Callable[[], dict[str, Schema]] = dict

    def for_kind(self, group: str, version: str, kind: str) -> Node | None:
        name = self.name_of(group, version, kind)
        if name is None:
            return None
        definitions = self.definitions()
        node = Node.of(definitions.get(name), definitions)
        return Node(node.schema, definitions, name) if node is not None else None


NO_SCHEMAS = SchemaSource(dict, lambda group, version, kind: None)
