"""Schema traversal (SchemaHas, HasSchemaWith) and the predicates validation and ratcheting ask with it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .internal import schema_of

Object = dict[str, Any]
Predicate = Callable[[Object], bool]

OPENAPI_V3_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def subschemas(s: Object) -> Iterator[Object]:
    """Every directly nested schema, in SchemaHas' order."""
    items = s.get("items")
    if isinstance(items, dict):
        yield items
    elif isinstance(items, list):
        yield from (i for i in items if isinstance(i, dict))
    for key in ("allOf", "anyOf", "oneOf"):
        yield from (i for i in s.get(key) or [] if isinstance(i, dict))
    if isinstance(s.get("not"), dict):
        yield s["not"]
    yield from (p for p in (s.get("properties") or {}).values() if isinstance(p, dict))
    if isinstance(s.get("additionalProperties"), dict):
        yield s["additionalProperties"]
    yield from (p for p in (s.get("patternProperties") or {}).values() if isinstance(p, dict))
    if isinstance(s.get("additionalItems"), dict):
        yield s["additionalItems"]
    yield from (p for p in (s.get("definitions") or {}).values() if isinstance(p, dict))
    yield from (d for d in (s.get("dependencies") or {}).values() if isinstance(d, dict))


def schema_has(s: Object | None, pred: Predicate) -> bool:
    """SchemaHas: whether pred holds for s or any schema nested in it."""
    if not isinstance(s, dict):
        return False
    stack = [s]
    while stack:
        node = stack.pop()
        if pred(node):
            return True
        stack.extend(reversed(list(subschemas(node))))
    return False


def spec_schemas(spec: Object) -> Iterator[Object]:
    """The top-level schema and every per-version schema of an internal spec."""
    top = schema_of(spec.get("validation"))
    if top is not None:
        yield top
    for version in spec.get("versions") or []:
        schema = schema_of(version.get("schema"))
        if schema is not None:
            yield schema


def has_schema_with(spec: Object, pred: Predicate) -> bool:
    """HasSchemaWith: pred applied to each whole schema of the spec."""
    return any(pred(s) for s in spec_schemas(spec))


def schema_has_defaults(s: Object | None) -> bool:
    return schema_has(s, lambda n: n.get("default") is not None)


def spec_has_defaults(spec: Object) -> bool:
    return has_schema_with(spec, schema_has_defaults)


def _has_kubernetes_extensions(n: Object) -> bool:
    return bool(
        n.get("x-kubernetes-embedded-resource")
        or n.get("x-kubernetes-preserve-unknown-fields") is not None
        or n.get("x-kubernetes-int-or-string")
        or n.get("x-kubernetes-list-map-keys")
        or n.get("x-kubernetes-list-type") is not None
        or n.get("x-kubernetes-validations")
    )


def spec_has_kubernetes_extensions(spec: Object) -> bool:
    return has_schema_with(spec, lambda s: schema_has(s, _has_kubernetes_extensions))


def schema_has_invalid_types(s: Object | None) -> bool:
    """SchemaHasInvalidTypes: a type that is not one of the OpenAPI v3 types."""
    return schema_has(s, lambda n: bool(n.get("type")) and n.get("type") not in OPENAPI_V3_TYPES)


def spec_has_invalid_types(spec: Object) -> bool:
    return has_schema_with(spec, schema_has_invalid_types)


def _non_atomic_set(n: Object) -> bool:
    items = n.get("items")
    if n.get("x-kubernetes-list-type") != "set" or not isinstance(items, dict):
        return False
    if items.get("type") == "array":
        # atomic is the implicit default of a list, so only an explicit other type is wrong
        return items.get("x-kubernetes-list-type") not in (None, "atomic")
    if items.get("type") == "object":
        # granular is the implicit default of a map, so only an explicit atomic is right
        return items.get("x-kubernetes-map-type") != "atomic"
    return False


def has_non_atomic_set_type(s: Object | None) -> bool:
    return schema_has(s, _non_atomic_set)


def spec_has_optional_old_self(spec: Object) -> bool:
    return has_schema_with(
        spec,
        lambda s: schema_has(
            s,
            lambda n: any(
                isinstance(r, dict) and r.get("optionalOldSelf") is not None
                for r in n.get("x-kubernetes-validations") or []
            ),
        ),
    )


def expressions_in(spec: Object) -> tuple[set[str], set[str]]:
    """findPreexistingExpressions: every rule and messageExpression of the spec's schemas."""
    rules: set[str] = set()
    messages: set[str] = set()

    def collect(n: Object) -> bool:
        for rule in n.get("x-kubernetes-validations") or []:
            if isinstance(rule, dict):
                rules.add(rule.get("rule") or "")
                if rule.get("messageExpression"):
                    messages.add(rule["messageExpression"])
        return False

    for schema in spec_schemas(spec):
        schema_has(schema, collect)
    return rules, messages
