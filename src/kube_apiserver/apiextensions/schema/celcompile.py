"""Compilation of ``x-kubernetes-validations`` rules (pkg/apiserver/schema/cel/compilation.go,
validation.go's ValidFieldPath) on top of :mod:`kube_apiserver.cel`.

Every rule is compiled once per schema node with ``self`` and ``oldSelf`` declared; a rule
uses ``oldSelf`` (is a transition rule) when the identifier occurs free in it. The interpreter has
no type checker: :mod:`.celtyping` types the rule against the node's CEL type (:mod:`.celtypes`)
for the errors cel-go's checker certainly reports (undefined fields, mismatched operators, a rule
that is not a bool, a messageExpression that is not a string); what it cannot type is ``dyn`` and
left to run time, as cel-go leaves ``dyn``.

Costs: the static estimate is cel-go's, ported in :mod:`.celestimate` (the node's size bounds:
maxItems, maxProperties, maxLength, or what fits in a 3 MiB request). At run time the token-based
:func:`kube_apiserver.cel.estimate_cost`, fed the actual sizes of the evaluated value, stands in
for cel-go's cost tracking; rules whose cost does not depend on sizes are charged a constant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ... import cel
from ...apimachinery import field
from ...apimachinery.field import Path
from ...cel import checks as cel_issues
from ...cel import cost as celcost
from . import celast, celestimate, celtyping
from .celtypes import CelType, decl_type, optional_of
from .structural import Structural, ValidationRule

SELF, OLD_SELF = "self", "oldSelf"
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024


@dataclass(slots=True)
class CompiledRule:
    """``CompilationResult`` of one rule."""

    rule: ValidationRule
    program: cel.Program | None = None
    error: str | None = None  # the cel Error's detail
    error_type: str = "Invalid"  # Invalid | Required | Internal
    uses_old_self: bool = False
    max_cost: int = 0
    max_cardinality: int = 0
    message_program: cel.Program | None = None
    message_error: str | None = None
    message_max_cost: int = 0
    normalized_field_path: str = ""
    constant_cost: int | None = None  # the run-time cost when it does not depend on sizes


def cel_schema(s: Structural) -> dict[str, Any]:
    """The JSONSchemaProps view of a node that CEL value conversion and sizing read."""
    if s.raw is not None:
        return s.raw
    out: dict[str, Any] = {}
    for attr, key in (("type", "type"), ("nullable", "nullable"), ("x_int_or_string", "x-kubernetes-int-or-string"),
                      ("x_embedded_resource", "x-kubernetes-embedded-resource"),
                      ("x_preserve_unknown_fields", "x-kubernetes-preserve-unknown-fields"),
                      ("x_list_type", "x-kubernetes-list-type"), ("x_list_map_keys", "x-kubernetes-list-map-keys"),
                      ("default", "default")):
        value = getattr(s, attr)
        if _present(value):
            out[key] = value
    vv = s.value_validation
    if vv is not None:
        for attr, key in (("format", "format"), ("max_items", "maxItems"), ("max_length", "maxLength"),
                          ("max_properties", "maxProperties"), ("required", "required"), ("enum", "enum")):
            value = getattr(vv, attr)
            if _present(value):
                out[key] = value
    if s.items is not None:
        out["items"] = cel_schema(s.items)
    if s.properties is not None:
        out["properties"] = {k: cel_schema(v) for k, v in s.properties.items()}
    if s.additional_properties is not None and s.additional_properties.structural is not None:
        out["additionalProperties"] = cel_schema(s.additional_properties.structural)
    return out


def _present(value: Any) -> bool:
    return not (value is None or value is False or value == "")


def _sizes(schema: dict[str, Any]) -> Callable[[str], int | None]:
    """Size bounds by path, ``oldSelf`` paths bounded like ``self`` ones."""
    sizes = celcost.schema_sizes(schema, SELF)

    def lookup(path: str) -> int | None:
        if path == OLD_SELF or path.startswith((OLD_SELF + ".", OLD_SELF + "[")):
            path = SELF + path[len(OLD_SELF):]
        return sizes.get(path)
    return lookup


def min_serialized_size(s: Structural | None) -> int:
    """DeclType.MinSerializedSize of a node (apiserver/pkg/cel/common SchemaDeclType)."""
    if s is None:
        return 1
    if s.x_int_or_string:
        return 1
    if s.type == "object":
        if s.properties is None:
            return 2
        required = set((s.value_validation.required if s.value_validation else None) or ())
        return 2 + sum(len(name) + min_serialized_size(prop) + 4 for name, prop in s.properties.items()
                       if name in required and prop.default is None)
    fmt = s.value_validation.format if s.value_validation else ""
    if s.type == "string":
        return {"duration": 3, "date": 12, "date-time": 21}.get(fmt, 2)
    return {"array": 2, "boolean": 4, "integer": 1, "number": 1}.get(s.type, 1)


def max_cardinality(s: Structural) -> int:
    """``maxCardinality``: how many values of this node fit in one request."""
    return MAX_REQUEST_SIZE_BYTES // (min_serialized_size(s) + 1)


def compile_node(s: Structural, rules: list[ValidationRule] | None = None,
                 is_resource_root: bool | None = None) -> list[CompiledRule]:
    """``Compile``: the compiled rules of a node (its own ``x_validations`` unless given); the
    root of a resource (by default: an embedded resource) also exposes apiVersion, kind and
    metadata.name/generateName."""
    rules = s.x_validations if rules is None else rules
    if not rules:
        return []
    schema = cel_schema(s)
    lookup = _sizes(schema)
    cardinality = max_cardinality(s)
    root = decl_type(s, s.x_embedded_resource if is_resource_root is None else is_resource_root)
    results = []
    for rule in rules:
        result = _compile_rule(s, rule, lookup, root)
        result.max_cardinality = cardinality
        results.append(result)
    return results


def _compile_rule(s: Structural, rule: ValidationRule, lookup: Callable[[str], int | None],
                  root: CelType | None) -> CompiledRule:
    result = CompiledRule(rule)
    if not rule.rule.strip():
        return result
    try:
        program = cel.compile(rule.rule, variables=(SELF, OLD_SELF))
    except cel.CompileError as err:
        result.error = str(err)
        return result
    typed = _typed(rule.rule, root, bool(rule.optional_old_self))
    if typed is not None and typed.issues:
        result.error = f"compilation failed: {typed.issues}"
        return result
    if typed is not None and typed.result.kind not in ("bool", "dyn"):
        result.error = "cel expression must evaluate to a bool"
        return result
    result.program = program
    result.uses_old_self = OLD_SELF in program.variables
    result.max_cost = typed.cost if typed is not None else cel.estimate_cost(rule.rule, lookup).max
    fixed = cel.estimate_cost(rule.rule, {}, 0, 0).max
    if fixed == cel.estimate_cost(rule.rule, lookup).max:
        result.constant_cost = fixed
    if rule.message_expression:
        _compile_message(result, rule.message_expression, lookup, root, bool(rule.optional_old_self))
    if rule.field_path:
        path, _, err = valid_field_path(rule.field_path, s)
        if err is None and path is not None:
            result.normalized_field_path = str(path)
    return result


def _compile_message(result: CompiledRule, expression: str, lookup: Callable[[str], int | None],
                     root: CelType | None, optional_old_self: bool) -> None:
    try:
        program = cel.compile(expression, variables=(SELF, OLD_SELF))
    except cel.CompileError as err:
        detail = str(err).removeprefix("compilation failed: ")
        result.message_error = f"messageExpression compilation failed: {detail}"
        return
    typed = _typed(expression, root, optional_old_self)
    if typed is not None and typed.issues:
        result.message_error = f"messageExpression compilation failed: {typed.issues}"
        return
    if typed is not None and typed.result.kind not in ("string", "dyn"):
        result.message_error = "messageExpression must evaluate to a string"
        return
    result.message_program = program
    result.message_max_cost = typed.cost if typed is not None else cel.estimate_cost(expression, lookup).max


@dataclass(slots=True)
class _Typed:
    issues: str  # cel-go's Issues.String(), empty without issues
    result: CelType
    cost: int


def _typed(expression: str, root: CelType | None, optional_old_self: bool) -> _Typed | None:
    """Type check and cost estimate as cel-go's; None where this cannot follow cel-go (the node is
    not visible to CEL, or the parser here does not read the expression)."""
    if root is None:
        return None
    try:
        tree = celast.parse(expression)
    except (SyntaxError, IndexError):
        return None
    old = optional_of(root) if optional_old_self else root
    checked = celtyping.check(tree, {SELF: root, OLD_SELF: old})
    issues = cel_issues.report(expression, checked.issues) if checked.issues else ""
    return _Typed(issues, checked.type_of(tree), celestimate.estimate(tree, checked, root))


# --- ValidFieldPath ---------------------------------------------------------------------------

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "'": "'", "\\": "\\"}


def _unescape_single_quote(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            repl = _ESCAPES.get(s[i + 1])
            if repl is None:
                raise ValueError(f"invalid escape char \\{s[i + 1]}")
            out.append(repl)
            i += 2
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


def _tokens(path: str) -> list[str]:
    """The bufio.Scanner split of ValidFieldPath: delimiters, quoted strings, runs between."""
    tokens, i = [], 0
    while i < len(path):
        if path[i] == "'":
            j = i + 1
            while j < len(path) and not (path[j] == "'" and path[j - 1] != "\\"):
                j += 1
            tokens.append(path[i:j + 1])
            i = j + 1
        elif path[i] in ".[]":
            tokens.append(path[i])
            i += 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[]":
                j += 1
            tokens.append(path[i:j])
            i = j
    return tokens


def valid_field_path(json_path: str, s: Structural | None, allow_array_notation: bool = True
                     ) -> tuple[Path | None, Structural | None, str | None]:
    """``ValidFieldPath``: (normalized path, schema found, error text or None)."""
    tokens = _tokens(json_path)
    path: Path | None = None
    i = 0
    try:
        while i < len(tokens):
            tok = tokens[i]
            if tok == "[":
                if not allow_array_notation:
                    raise ValueError("array notation is not allowed")
                name, i = _bracket(tokens, i)
            elif tok == ".":
                if i + 1 >= len(tokens):
                    raise ValueError("unexpected end of JSON path")
                name, i = tokens[i + 1], i + 2
            else:
                raise ValueError(f"expected [ or . but got: {tok}")
            path, s = _append(path, s, name)
    except ValueError as err:
        return None, None, str(err)
    return path, s, None


def _bracket(tokens: list[str], i: int) -> tuple[str, int]:
    if i + 1 >= len(tokens):
        raise ValueError("unexpected end of JSON path")
    tok = tokens[i + 1]
    if len(tok) < 2 or tok[0] != "'" or tok[-1] != "'":
        raise ValueError(f"expected single quoted string but got {tok}")
    try:
        name = _unescape_single_quote(tok[1:-1])
    except ValueError as err:
        raise ValueError(f"invalid string literal: {err}") from None
    if i + 2 >= len(tokens):
        raise ValueError("unexpected end of JSON path")
    if tokens[i + 2] != "]":
        raise ValueError(f"expected ] but got {tokens[i + 2]}")
    return name, i + 3


def _append(path: Path | None, s: Structural | None, name: str) -> tuple[Path, Structural | None]:
    if s is not None and s.properties is not None:
        prop = s.properties.get(name)
        if prop is None:
            raise ValueError("does not refer to a valid field")
        return field.child_of(path, name), prop
    if s is not None and s.additional_properties is not None:
        key = path.key(name) if path is not None else field._node("", name, None)
        return key, s.additional_properties.structural
    raise ValueError("does not refer to a valid field")
