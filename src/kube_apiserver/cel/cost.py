"""A static cost estimate for CEL expressions, standing in for cel-go's checker.CostEstimator, which
Kubernetes uses to refuse CRD rules that could run too long (the interpreter reports no cost at all,
so nothing limits cost at run time here).

The approximation, on tokens rather than a typed AST:
- every identifier, field selection, index, operator and function call costs 1, literals 0;
- string scans (matches, contains, startsWith, find, split, ...) add ceil(0.1 * size of the receiver)
  (cel-go's string traversal factor), where the size bound is looked up by path;
- a comprehension (all, exists, exists_one, map, filter) costs size(target) * (body + 2), where
  size(target) is the bound of the list or map it iterates (nested comprehensions multiply), and the
  loop variable stands for the path "<target>[*]" inside the body.
Paths are dotted from the variable: "self.spec.items", "self.spec.items[*].name". `schema_sizes`
derives their bounds from an OpenAPI schema the way Kubernetes does (maxItems, maxProperties and
maxLength, else what fits in a 3 MiB request). cel-go's real estimate differs in detail (it prices each
overload, and sizes of computed values); the order of magnitude, which decides the budget, agrees."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kube_apiserver.cel.lexer import IDENT, PUNCT, Token, matching, tokenize

PER_CALL_LIMIT = 1_000_000  # runtime cost limit of one evaluation (k8s.io/apiserver/pkg/apis/cel)
RUNTIME_CEL_COST_BUDGET = 10_000_000
STATIC_ESTIMATED_COST_LIMIT = 10_000_000  # per expression, for CRD rules
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000  # all rules of a CRD
MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024
UNBOUNDED_STRING = MAX_REQUEST_SIZE_BYTES - 2
UNBOUNDED_LIST = (MAX_REQUEST_SIZE_BYTES - 2) // 2  # elements of the smallest serialized size

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
STRING_SCANS = frozenset({"matches", "contains", "startsWith", "endsWith", "find", "findAll", "split",
                          "replace", "lowerAscii", "upperAscii", "trim", "substring", "indexOf",
                          "lastIndexOf", "charAt", "join", "format", "quantity", "url", "ip", "cidr"})
_COSTLESS = {",", "(", ")", "]", "{", "}", ":"}

Sizes = Mapping[str, int] | Callable[[str], int | None]


@dataclass(frozen=True)
class CostEstimate:
    max: int

    def exceeds(self, limit: int = STATIC_ESTIMATED_COST_LIMIT) -> bool:
        return self.max > limit


def cost_error_message(cost_name: str, cost: int, limit: int = STATIC_ESTIMATED_COST_LIMIT) -> str:
    """getCostErrorMessage of apiextensions validation."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (f"{cost_name} exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, "
            "maxProperties, and maxLength where arrays, maps, and strings are declared)")


def estimate_cost(expression: str, sizes: Sizes | None = None, default_list_size: int = UNBOUNDED_LIST,
                  default_string_size: int = UNBOUNDED_STRING) -> CostEstimate:
    """The worst-case cost of `expression` given size bounds of the paths it iterates or scans."""
    lookup = sizes if callable(sizes) else (sizes or {}).get
    estimator = _Estimator(tokenize(expression), lookup, default_list_size, default_string_size)
    return CostEstimate(estimator.cost(0, len(estimator.tokens), {}))


class _Estimator:
    def __init__(self, tokens: list[Token], lookup: Callable[[str], int | None], lists: int, strings: int):
        self.tokens, self.lookup, self.lists, self.strings = tokens, lookup, lists, strings

    def size(self, path: str | None, default: int) -> int:
        found = self.lookup(path) if path is not None else None
        return default if found is None else found

    def cost(self, start: int, end: int, bound: dict[str, str]) -> int:
        total, i = 0, start
        while i < end:
            token = self.tokens[i]
            if self._is_call(i, MACROS):
                close = matching(self.tokens, i + 1)
                target = self.path(i - 1, bound)
                variable = self.tokens[i + 2].text if i + 2 < end else ""
                inner = {**bound, variable: f"{target}[*]"} if target else bound
                body = self.cost(i + 4, min(close, end), inner)
                total += 1 + self.size(target, self.lists) * (body + 2)
                i = close + 1
                continue
            if self._is_call(i, STRING_SCANS):
                receiver = self.path(i - 1, bound) if self._text(i - 1) == "." else None
                total += math.ceil(0.1 * self.size(receiver, self.strings)) if receiver else 1
            if token.kind == IDENT or (token.kind == PUNCT and token.text not in _COSTLESS):
                total += 1
            i += 1
        return total

    def _text(self, index: int) -> str:
        return self.tokens[index].text if 0 <= index < len(self.tokens) else ""

    def _is_call(self, index: int, names: frozenset[str]) -> bool:
        token = self.tokens[index]
        return token.kind == IDENT and token.text in names and self._text(index + 1) == "(" and (
            names is not MACROS or self._text(index - 1) == ".")

    def path(self, dot: int, bound: dict[str, str]) -> str | None:
        """The dotted path of the select chain ending just before tokens[dot] ('.'), if it is one."""
        parts: list[str] = []
        i = dot - 1
        while i >= 0 and self.tokens[i].kind == IDENT:
            parts.append(self.tokens[i].text)
            if self._text(i - 1) != ".":
                break
            i -= 2
        if not parts:
            return None
        parts.reverse()
        head = bound.get(parts[0], parts[0])
        return ".".join([head, *parts[1:]])


# ---- size bounds from an OpenAPI schema (k8s.io/apiserver/pkg/cel/common SchemaDeclType) ----


def schema_sizes(schema: dict[str, Any], root: str = "self") -> dict[str, int]:
    """Max elements per path: list items, map entries, string length (maxLength counted 4 bytes per
    character, as Kubernetes does), bounded by what fits in a request when the schema says nothing."""
    sizes: dict[str, int] = {}
    _walk(schema, root, sizes)
    return sizes


def _walk(schema: dict[str, Any], path: str, sizes: dict[str, int]) -> int:
    """Fill `sizes` under `path`; returns the minimum serialized size of a value of `schema`."""
    kind = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        sizes[path] = _string_bound(schema)
        return 1
    if kind == "array" and isinstance(schema.get("items"), dict):
        element = _walk(schema["items"], f"{path}[*]", sizes)
        sizes[path] = schema.get("maxItems", (MAX_REQUEST_SIZE_BYTES - 2) // (element + 1))
        return 2
    if kind == "object":
        return _walk_object(schema, path, sizes)
    if kind == "string":
        sizes[path] = _string_bound(schema)
        return 2
    return {"boolean": 4}.get(str(kind), 1)


def _walk_object(schema: dict[str, Any], path: str, sizes: dict[str, int]) -> int:
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        value = _walk(additional, f"{path}[*]", sizes)
        sizes[path] = schema.get("maxProperties", (MAX_REQUEST_SIZE_BYTES - 2) // (value + 6))
        return 2
    required = set(schema.get("required") or ())
    minimum = 2
    for name, prop in (schema.get("properties") or {}).items():
        size = _walk(prop, f"{path}.{name}", sizes)
        if name in required and "default" not in prop:
            minimum += len(name) + size + 4
    return minimum


def _string_bound(schema: dict[str, Any]) -> int:
    if "maxLength" in schema:
        return max(schema["maxLength"], 0) * (1 if schema.get("format") == "byte" else 4)
    fmt = schema.get("format")
    if fmt in ("duration", "date-time"):
        return 32
    if fmt == "date":
        return 12
    enum = [value for value in schema.get("enum") or () if isinstance(value, str)]
    return max(map(len, enum)) if enum else UNBOUNDED_STRING
