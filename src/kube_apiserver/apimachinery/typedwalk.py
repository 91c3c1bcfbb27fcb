"""One walk of a built-in object with its kind's schema that does what three walks did: Go's typed decoding
(schematypes.decode: the first wrong-type error, nulls as zero values, []byte canonical), the strict
decoder's unknown fields (fieldvalidation.unknown_fields, pruned as they are found) and the count of the
object's strings as sent (fieldvalidation.may_have_duplicates: whether the body repeated a key).

What each schema position does is derived once, in a table per position (a kind's root node lives as long as
its scope): the decoding action, the Go type and field path an error names, the struct's field table, whether
the unknown-field walk reaches it. So the walk does dict lookups and type checks only. A kind whose schema
holds a position the two older walks treat differently (a node typed decoding skips but the unknown-field walk
enters, an unknown type) is not walked here: the walk raises Unsupported before it changed anything (its
changes are applied when it is done) and the caller uses the older walks."""

from __future__ import annotations

from typing import Any

from . import fieldvalidation, schematypes
from .jsontypes import INT_RANGES, number_error, value_kind
from .openapischema import Node

# Decoding actions.
STRING, BYTES, INTEGER, NUMBER, BOOLEAN, INT_OR_STRING, QUANTITY, SKIP, LIST, MAP, STRUCT, OBJECT, ODD = (
    range(13)
)
_CONTAINERS = ("struct", "map", "list")
_ENTERED = {STRUCT: "struct", LIST: "list", MAP: "map"}  # the unknown-field walk's shape of each container
# A path, built only where a container is entered: (parent, step, how), how being one of these.
FIELD, MAP_KEY, INDEX = 0, 1, 2
Path = tuple[Any, str | int, int] | None


class _Field:
    """A struct field: its position's plan, whether Go omits its zero value, what a null becomes."""

    __slots__ = ("plan", "omit", "key", "owner", "_null")

    def __init__(self, plan: _Plan, omit: bool, key: str, owner: _Plan):
        self.plan, self.omit, self.key, self.owner = plan, omit, key, owner
        self._null: tuple[bool, Any] | None = None

    def null(self) -> tuple[bool, Any]:
        """(kept, value): a null field is written back as its zero value, or removed."""
        if self._null is None:
            node = self.plan.node
            kept = schematypes._null_is_zero(self.owner.node.definition, self.key, node)
            self._null = (kept, schematypes._zero(node) if kept else None)
        return self._null


class _Plan:
    """What the walk does at one position of a kind's schema."""

    __slots__ = (
        "node",
        "kind",
        "holder",
        "path",
        "walked",
        "go",
        "low",
        "high",
        "_fields",
        "_extra",
        "_child",
        "known",
    )

    def __init__(self, node: Node, holder: str, path: str, walked: bool, root: bool = False):
        self.node, self.holder, self.path = node, holder, path
        self.kind = _action(node, root)
        # Whether the unknown-field walk reaches this position and enters it (reports a struct's unknown keys).
        self.walked = walked and fieldvalidation.shape(node) == _ENTERED.get(self.kind)
        self.go = schematypes.go_type(node) if self.kind in (INTEGER, STRING, BYTES, NUMBER, BOOLEAN) else ""
        self.low, self.high = INT_RANGES.get(self.go, (0, 0))
        self._fields: dict[str, _Field | None] | None = None
        self._extra: _Plan | None = None
        self._child = False
        # Keys a struct knows without a schema: left as they are, never reported.
        known = fieldvalidation.TYPE_META if root else ()
        self.known = frozenset(known + (fieldvalidation.EMBEDDED if node.embedded_resource else ()))

    def zero(self) -> Any:
        """What a null list item or map value becomes (a struct's is a new empty object each time)."""
        return schematypes._zero(self.node)

    def fields(self) -> dict[str, _Field | None]:
        """A struct's fields by name (None: a property without a schema, left as it is)."""
        if self._fields is None:
            node = self.node
            holder = schematypes.short(node.definition) if node.definition else self.holder
            omitted = schematypes.omitted_when_zero(node.definition)
            fields: dict[str, _Field | None] = {}
            for key in node.properties():
                child = node.child(key)
                if child is None:
                    fields[key] = None
                    continue
                plan = _Plan(child, holder, f"{self.path}.{key}" if self.path else key, self.walked)
                fields[key] = _Field(plan, key in omitted, key, self)
            self._fields = fields
        return self._fields

    def extra(self) -> _Plan | None:
        """A list's items or a map's values."""
        if not self._child:
            child = self.node.items() if self.kind == LIST else self.node.additional()
            self._extra = None if child is None else _Plan(child, self.holder, self.path, self.walked)
            self._child = True
        return self._extra

    def mismatch(self, value: Any, wrong: str | None = None) -> schematypes.TypeMismatch:
        go = "int32" if self.kind == INT_OR_STRING else self.go or schematypes.go_type(self.node)
        return schematypes.TypeMismatch(
            f"json: cannot unmarshal {wrong or value_kind(value)} into Go struct field "
            f"{self.holder}.{self.path} of type {go}"
        )


def _action(node: Node, root: bool) -> int:
    """The decoding action, in the order schematypes._Decoder.value decides it."""
    if root:
        return STRUCT if node.properties() else ODD
    if node.int_or_string:
        return INT_OR_STRING
    if node.definition == schematypes.QUANTITY:
        return QUANTITY
    if schematypes._skipped(node):
        return ODD if fieldvalidation.shape(node) in _CONTAINERS else SKIP
    kind = node.type
    if kind == "string":
        return BYTES if node.schema.get("format") == "byte" else STRING
    if kind in ("integer", "number", "boolean", "array"):
        return {"integer": INTEGER, "number": NUMBER, "boolean": BOOLEAN, "array": LIST}[kind]
    if kind != "object":
        return ODD
    if node.properties():
        return STRUCT
    return MAP if node.additional() is not None else OBJECT


def root_plan(root: Node) -> _Plan:
    return root.derived(
        root_plan, lambda node: _Plan(node, schematypes.short(node.definition), "", True, True)
    )


class Unsupported(Exception):
    """The object reached a schema position this walk does not handle as the older walks do."""


_DELETE = object()


class Walked:
    """What the walk found: the unknown fields' paths (in document order) and the object's strings as sent;
    and the changes to make (container, key or index, new value or _DELETE), made once the walk is done."""

    __slots__ = ("unknown", "strings", "changes")

    def __init__(self) -> None:
        self.unknown: list[Path] = []
        self.strings = 0
        self.changes: list[tuple[Any, Any, Any]] = []

    def unknown_paths(self, *, sort_keys: bool = False, map_keys: bool = True) -> list[str]:
        """The paths as fieldvalidation.unknown_fields gives them with the same options."""
        paths = self.unknown
        if sort_keys:  # each level's keys sorted: the order of the paths' steps, compared step by step
            paths = sorted(paths, key=_steps)
        return [_render(path, map_keys) for path in paths]


def _steps(path: Path) -> tuple[str | int, ...]:
    steps: list[str | int] = []
    while path is not None:
        path, step, _ = path
        steps.append(step)
    return tuple(reversed(steps))


def _render(path: Path, map_keys: bool) -> str:
    links = []
    while path is not None:
        links.append(path)
        path = path[0]
    text = ""
    for _, step, how in reversed(links):
        if how == INDEX:
            text = f"{text}[{step}]"
        elif how == FIELD or map_keys:
            text = f"{text}.{step}" if text else str(step)
    return text


def walk(obj: dict[str, Any], root: Node) -> Walked:
    """Decodes `obj` in place as Go decodes it into the kind and drops its unknown fields; raises
    schematypes.TypeMismatch with the first wrong-type error, or Unsupported (`obj` then left as it is)."""
    plan = root_plan(root)
    if plan.kind != STRUCT:
        raise Unsupported
    found = Walked()
    found.strings = _struct(obj, plan, None, found)
    for container, key, value in found.changes:
        if value is _DELETE:
            del container[key]
        else:
            container[key] = value
    return found


def _count(value: Any) -> int:
    return fieldvalidation._count_strings(value)


def _struct(obj: dict[str, Any], plan: _Plan, path: Path, found: Walked) -> int:
    fields = plan.fields()
    strings = len(obj)
    changes = found.changes
    for key, item in obj.items():
        field = fields.get(key, False)
        if not field:  # unknown, known without a schema (False), or a property without one (None)
            strings += _count(item)
            if field is False and plan.walked and key not in plan.known:
                found.unknown.append((path, key, FIELD))
                changes.append((obj, key, _DELETE))
            continue
        child = field.plan
        kind = child.kind
        if item is None:
            kept, zero = field.null()
            changes.append((obj, key, zero if kept else _DELETE))
            continue
        if kind == STRING:
            if item.__class__ is not str and not isinstance(item, str):
                raise child.mismatch(item)
            strings += 1
            if field.omit and item == "":
                changes.append((obj, key, _DELETE))
            continue
        if kind == STRUCT or kind == LIST or kind == MAP:
            strings += _container(item, child, (path, key, FIELD), found)
            continue
        if kind == SKIP or kind == OBJECT:
            strings += _opaque(item, child)
            continue
        strings += item.__class__ is str
        decoded = _scalar(item, child)
        if field.omit and schematypes._is_zero_scalar(decoded):
            changes.append((obj, key, _DELETE))
        elif decoded is not item:
            changes.append((obj, key, decoded))
    return strings


def _container(value: Any, plan: _Plan, path: Path, found: Walked) -> int:
    kind = plan.kind
    if kind == STRUCT:
        if not isinstance(value, dict):
            raise plan.mismatch(value)
        return _struct(value, plan, path, found)
    if kind == LIST:
        if not isinstance(value, list):
            raise plan.mismatch(value)
        return _list(value, plan, path, found)
    if not isinstance(value, dict):
        raise plan.mismatch(value)
    return _map(value, plan, path, found)


def _list(value: list[Any], plan: _Plan, path: Path, found: Walked) -> int:
    items = plan.extra()
    if items is None:
        return _count(value)
    strings = 0
    kind = items.kind
    for index, item in enumerate(value):
        if item is None:
            found.changes.append((value, index, items.zero()))
        elif kind == STRING:
            if not isinstance(item, str):
                raise items.mismatch(item)
            strings += 1
        elif kind == STRUCT or kind == LIST or kind == MAP:
            strings += _container(item, items, (path, index, INDEX), found)
        elif kind == SKIP or kind == OBJECT:
            strings += _opaque(item, items)
        else:
            strings += item.__class__ is str
            decoded = _scalar(item, items)
            if decoded is not item:
                found.changes.append((value, index, decoded))
    return strings


def _map(value: dict[str, Any], plan: _Plan, path: Path, found: Walked) -> int:
    values = plan.extra()
    strings = len(value)
    if values is None:
        return strings + sum(_count(item) for item in value.values())
    kind = values.kind
    if kind == STRING:  # labels, annotations, a ConfigMap's data: one pass over the values
        for key, item in value.items():
            if item.__class__ is not str:
                if item is None:
                    found.changes.append((value, key, values.zero()))
                    continue
                if not isinstance(item, str):
                    raise values.mismatch(item)
            strings += 1
        return strings
    for key, item in value.items():
        if item is None:
            found.changes.append((value, key, values.zero()))
        elif kind == STRUCT or kind == LIST or kind == MAP:
            strings += _container(item, values, (path, key, MAP_KEY), found)
        elif kind == SKIP or kind == OBJECT:
            strings += _opaque(item, values)
        else:
            strings += item.__class__ is str
            decoded = _scalar(item, values)
            if decoded is not item:
                found.changes.append((value, key, decoded))
    return strings


def _scalar(value: Any, plan: _Plan) -> Any:
    """A value of a scalar position (not STRING, handled inline) as Go decodes it."""
    kind = plan.kind
    if kind == INTEGER:
        if value.__class__ is int and plan.low <= value <= plan.high:
            return value
        wrong = number_error(value, plan.go)
        if wrong is not None:
            raise plan.mismatch(value, wrong)
        return int(value) if isinstance(value, float) else value
    if kind == BOOLEAN:
        if value is True or value is False:
            return value
        raise plan.mismatch(value)
    if kind == INT_OR_STRING:
        if isinstance(value, str):
            return value
        wrong = number_error(value, "int32")
        if wrong is not None:
            raise plan.mismatch(value, wrong)
        return int(value)
    if kind == QUANTITY:
        if isinstance(value, bool | list | dict):
            raise schematypes.TypeMismatch(schematypes.QUANTITY_FORMAT)
        return value
    if kind == NUMBER:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise plan.mismatch(value)
    if kind == BYTES:
        if not isinstance(value, str):
            raise plan.mismatch(value)
        return schematypes._bytes(value)
    if kind == STRING:
        if not isinstance(value, str):
            raise plan.mismatch(value)
        return value
    raise Unsupported


def _opaque(value: Any, plan: _Plan) -> int:
    """A value decoding leaves as it is (SKIP), or an object without properties or values' schema (OBJECT)."""
    if plan.kind == OBJECT and not isinstance(value, dict):
        raise plan.mismatch(value)
    return _count(value)
