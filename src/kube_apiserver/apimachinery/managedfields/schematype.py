"""How a position of an OpenAPI schema is typed for server-side apply.

This mirrors kube-openapi's schemaconv (OpenAPI -> structured-merge-diff schema): an `Atom` says
whether the position can hold a scalar, a list (atomic, set, or map keyed by some fields) and/or a
map (atomic or granular, with declared fields). Positions without a schema are "deduced": maps are
granular, lists atomic, scalars leaves. RawExtension is untyped and atomic throughout."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any

from ..openapischema import Node
from . import fieldpath
from .fieldpath import PathElement

RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# Defaults of list-map key fields that the published v1.34 schemas carry but our schema source lacks
# (ContainerPort.protocol and ServicePort.protocol: `+default="TCP"`).
KEY_DEFAULTS = {"protocol": "TCP"}


class Special(Enum):
    DEDUCED = "deduced"  # no schema: granular maps of deduced, atomic lists, any scalar
    UNTYPED = "untyped"  # atomic maps and lists, any scalar
    QUANTITY = "quantity"  # any scalar only


TypeRef = Node | Special
DEDUCED = Special.DEDUCED
UNTYPED = Special.UNTYPED


@dataclass(frozen=True)
class ListType:
    relationship: str  # "atomic" | "set" | "map"
    keys: tuple[str, ...]
    item: TypeRef


@dataclass(frozen=True)
class MapType:
    atomic: bool
    owner: TypeRef

    def field_type(self, name: str) -> TypeRef | None:
        """The type of a member, or None when the schema does not declare it."""
        types = self.types
        return types.declared.get(name, types.other)

    @cached_property
    def types(self) -> FieldTypes:
        """The members' types, for walks that look up many (a map type lives as long as its schema node)."""
        return self.owner.derived(FieldTypes, FieldTypes) if isinstance(self.owner, Node) else FieldTypes(self.owner)

    def declares(self, name: str) -> bool:
        return isinstance(self.owner, Node) and name in self.owner.properties()


@dataclass(frozen=True)
class Atom:
    scalar: str | None  # "numeric" | "string" | "boolean" | "untyped"
    list: ListType | None
    map: MapType | None

    def parts(self) -> tuple[bool, bool, bool]:
        return (self.scalar is not None, self.list is not None, self.map is not None)

    # deduce's narrowed atoms, made once per atom: atoms live as long as their schema node, and deduce
    # runs on every value a write's managedFields walk (a new frozen dataclass each time costs ~1 µs).
    @cached_property
    def map_part(self) -> Atom:
        return Atom(None, None, self.map) if self.map is not None else self

    @cached_property
    def list_part(self) -> Atom:
        return Atom(None, self.list, None) if self.list is not None else self

    @cached_property
    def scalar_part(self) -> Atom:
        return Atom(self.scalar, None, None) if self.scalar is not None else self


def of_root(schema: Node | None) -> TypeRef:
    return DEDUCED if schema is None else schema


def resolve(ref: TypeRef) -> Atom:
    if isinstance(ref, Node):
        return ref.derived(resolve, _resolve_node)
    return _SPECIAL_ATOMS[ref]


_SPECIAL_ATOMS = {
    DEDUCED: Atom("untyped", ListType("atomic", (), UNTYPED), MapType(False, DEDUCED)),
    UNTYPED: Atom("untyped", ListType("atomic", (), UNTYPED), MapType(True, UNTYPED)),
    Special.QUANTITY: Atom("untyped", None, None),
}


def _resolve_node(ref: Node) -> Atom:
    kind = ref.type
    if kind == "object":
        return Atom(None, None, _map_type(ref))
    if kind == "array":
        return Atom(None, _list_type(ref), None)
    if kind in ("integer", "number"):
        return Atom("numeric", None, None)
    if kind == "boolean":
        return Atom("boolean", None, None)
    if kind == "string":
        return Atom("string" if ref.schema.get("format", "") in ("", "byte") else "untyped", None, None)
    if kind == "":
        return Atom("untyped", _list_type(ref), _map_type(ref))
    return Atom("untyped", None, None)


def deduce(atom: Atom, value: Any) -> Atom:
    """deduceAtom: narrows an atom to the part matching the value, when it has that part."""
    if isinstance(value, dict):
        return atom.map_part
    if isinstance(value, list):
        return atom.list_part
    if isinstance(value, bool | int | float | str):
        return atom.scalar_part
    return atom


def _map_type(node: Node) -> MapType:
    return MapType(node.map_type == "atomic", node)


def _list_type(node: Node) -> ListType:
    item = _child(node.schema.get("items"), node.items()) if "items" in node.schema else UNTYPED
    list_type = node.list_type
    if list_type == "map":
        return ListType("map", tuple(node.list_map_keys), item)
    if list_type == "set":
        return ListType("set", (), item)
    if list_type is not None:
        return ListType("atomic", (), item)
    if node.patch_strategy in ("merge", "merge,retainKeys"):
        merge_key = node.patch_merge_key
        return ListType("map", (merge_key,), item) if merge_key else ListType("set", (), item)
    return ListType("atomic", (), item)


class FieldTypes:
    """The types of a struct's members, derived once per schema node: the declared ones by name, and the one
    of any other name (additionalProperties, deduced, or None for an undeclared field of a struct). Memoizing
    per name instead would keep every label and data key ever written."""

    __slots__ = ("declared", "other", "takes_scalar", "other_takes_scalar")

    def __init__(self, owner: TypeRef) -> None:
        self.declared: dict[str, TypeRef] = {name: _child(raw, owner.child(name))
                                             for name, raw in owner.properties().items()
                                             } if isinstance(owner, Node) else {}
        self.other = _field_type(owner, "", declared=False)
        # Whether a member's type (DEDUCED when undeclared) has a scalar part: walks take a shortcut for those.
        self.takes_scalar = {name: resolve(ref).scalar is not None for name, ref in self.declared.items()}
        self.other_takes_scalar = resolve(self.other or DEDUCED).scalar is not None


def _field_type(owner: TypeRef, name: str, declared: bool = True) -> TypeRef | None:
    """`declared=False`: the type of a name the owner's properties do not hold."""
    if owner is DEDUCED:
        return DEDUCED
    if owner is UNTYPED or owner is Special.QUANTITY:
        return UNTYPED
    assert isinstance(owner, Node)
    props = owner.properties()
    if declared and name in props:
        return _child(props[name], owner.child(name))
    extra = owner.schema.get("additionalProperties")
    if isinstance(extra, dict):
        return _child(extra, owner.additional())
    if extra is True or owner.preserves_unknown_fields or not props:
        return DEDUCED
    return None  # an undeclared field of a struct


def _child(raw: Any, node: Node | None) -> TypeRef:
    """The type of the child schema `raw`; `node` is its parent's memoized node for it (resolving it
    again on every walk made each write resolve every $ref of its kind's schema anew)."""
    if node is None:  # not a schema
        return UNTYPED
    name = _ref_name(raw)
    if name == RAW_EXTENSION:
        return UNTYPED
    if name == QUANTITY:
        return Special.QUANTITY
    return node


def _ref_name(raw: dict[str, Any]) -> str:
    ref = raw.get("$ref")
    all_of = raw.get("allOf")
    if not isinstance(ref, str) and isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
        ref = all_of[0].get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""


# ---- list items as path elements ----

class ItemError(ValueError):
    pass


def item_element(list_type: ListType, item: Any) -> PathElement:
    """listItemToPathElement: an associative list's item by its keys (map) or its value (set)."""
    if list_type.relationship == "map":
        return _keyed(list_type, item)
    if list_type.relationship == "set":
        return _set_value(item)
    raise ItemError("invalid indexing of non-associative list")


def _keyed(list_type: ListType, item: Any) -> PathElement:
    if item is None:
        raise ItemError("associative list with keys may not have a null element")
    if not isinstance(item, dict):
        raise ItemError("associative list with keys may not have non-map elements")
    pairs = []
    for name in list_type.keys:
        if name in item:
            pairs.append((name, item[name]))
            continue
        default = _key_default(list_type.item, name)
        if default is not None:
            pairs.append((name, default))
    if list_type.keys and not pairs:
        quoted = " ".join(f'"{name}"' for name in list_type.keys)
        raise ItemError(f"associative list with keys has an element that omits all key fields [{quoted}] "
                        "(and doesn't have default values for any key fields)")
    return fieldpath.key(pairs)


def _key_default(item: TypeRef, name: str) -> Any:
    if not isinstance(item, Node):
        return None
    raw = item.properties().get(name)
    if isinstance(raw, dict) and raw.get("default") is not None:
        return raw["default"]
    if isinstance(raw, dict):
        resolved = Node.of(raw, item.definitions)
        if resolved is not None and resolved.schema.get("default") is not None:
            return resolved.schema["default"]
        return KEY_DEFAULTS.get(name)
    return None


def _set_value(item: Any) -> PathElement:
    if isinstance(item, dict):
        raise ItemError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise ItemError("not supported: associative list with lists as elements")
    if item is None:
        raise ItemError("associative list without keys has an element that's an explicit null")
    return fieldpath.value(item)
