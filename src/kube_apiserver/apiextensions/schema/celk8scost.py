"""Pricing for cel-go's cost estimate (checker/cost.go) shared by :mod:`.celestimate`, and the call
costs of Kubernetes' CEL libraries (k8s.io/apiserver pkg/cel/library/cost.go EstimateCallCost):
estimates are (min, max) pairs, saturating at 2^64-1 as cel-go's uint64s do."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .celast import Expr, Literal
from .celtypes import CelType

MAX = (1 << 64) - 1
STRING_TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40
Est = tuple[int, int]  # (min, max): cel-go's CostEstimate and SizeEstimate alike
UNKNOWN: Est = (0, MAX)
ONE: Est = (1, 1)
_NOMINAL = frozenset({
    "masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast",
    "isLinkLocalUnicast", "isGlobalUnicast", "format.named", "sign", "asInteger", "isInteger",
    "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch",
    "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery",
})
_ARG_TRAVERSAL = frozenset({"cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver"})
_O1_EQUALITY = frozenset({"net.IP", "net.CIDR", "kubernetes.Quantity", "kubernetes.Semver"})


def add(a: Est, b: Est) -> Est:
    return min(a[0] + b[0], MAX), min(a[1] + b[1], MAX)


def mul(a: Est, b: Est) -> Est:
    return min(a[0] * b[0], MAX), min(a[1] * b[1], MAX)


def union(a: Est, b: Est) -> Est:
    return min(a[0], b[0]), max(a[1], b[1])


def factor(a: Est, f: float) -> Est:
    def one(x: int) -> int:
        if x > 0 and f > 0 and x > MAX / f:
            return MAX
        return min(math.ceil(x * f), MAX)
    return one(a[0]), one(a[1])


@dataclass
class Node:
    """checker.AstNode: what a call estimator sees of an argument."""

    expr: Expr | None
    path: list[str] | None
    type: CelType
    size: Est | None



SizeOf = Callable[[list[str] | None], Est | None]


def _elem_node(node: Node) -> Node | None:
    t = node.type
    param = t.key if t.kind == "map" else t.elem if t.kind in ("list", "optional") else None
    if param is None:
        return None
    return Node(None, [*node.path, "@items"] if node.path is not None else None, param, None)


def kubernetes_call_cost(fn: str, overload: str, target: Node | None, args: list[Node], estimate: SizeOf
                         ) -> tuple[Est, Est | None] | None:
    """library.CostEstimator.EstimateCallCost: (cost without arguments, result size); ``estimate``
    is the size estimator's lookup by path."""
    def size_of(node: Node) -> Est:  # sizeEstimate: the computed size, else the estimator's
        if node.size is not None:
            return node.size
        return estimate(node.path) or UNKNOWN

    if fn in _NOMINAL:
        return ONE, None
    if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
        elem = _elem_node(target)
        if elem is not None:
            cost = ONE
            if elem.type.kind in ("string", "bytes"):
                cost = add(cost, factor(size_of(elem), STRING_TRAVERSAL))
            return mul(size_of(target), cost), None
        return factor(size_of(target), STRING_TRAVERSAL), None
    if fn in ("url", "jsonpatch.escapeKey") and len(args) == 1:
        size = size_of(args[0])
        return factor(size, STRING_TRAVERSAL), size
    if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
        size = size_of(target)
        return factor(size, STRING_TRAVERSAL), size
    if fn == "replace" and target is not None and len(args) >= 2:
        return _replace(target, args, size_of)
    if fn == "split" and target is not None:
        size = size_of(target)
        limit = size[1]
        if len(args) > 1 and isinstance(args[1].expr, Literal) and args[1].expr.kind == "int":
            limit = args[1].expr.value
        return factor(size, 2 * STRING_TRAVERSAL), (0, limit)
    if fn == "join" and target is not None:
        return _join(target, args, size_of)
    if fn in ("find", "findAll") and target is not None and args:
        size = size_of(target)
        text = factor(add(size, ONE), STRING_TRAVERSAL)
        return mul(text, factor(size_of(args[0]), REGEX_LENGTH)), (0, size[1])
    if (fn in _ARG_TRAVERSAL or fn == "ip" and overload != "cidr_ip") and args:
        return factor(size_of(args[0]), STRING_TRAVERSAL), None
    if fn == "ip":
        return ONE, None
    if fn == "ip.isCanonical" and args:
        return factor(size_of(args[0]), 2 * STRING_TRAVERSAL), None
    if fn in ("containsIP", "containsCIDR") and args:
        return _contains_net(fn, overload, args[0], size_of), None
    if fn == "_==_" and len(args) == 2:
        lhs, rhs = args[0].type, args[1].type
        if lhs.kind == rhs.kind == "opaque" and lhs.name == rhs.name:
            if lhs.name in _O1_EQUALITY:
                return ONE, None
            if lhs.name == "kubernetes.URL":
                size = args[1].size or ONE
                return factor((1, size[1]), STRING_TRAVERSAL), None
    return None


def _replace(target: Node, args: list[Node], size_of: Callable[[Node], Est]) -> tuple[Est, Est | None]:
    size = size_of(target)
    old, new = size_of(args[0]), size_of(args[1])
    if old[0] == 0:
        count_max, kept_max = (size[1] + 1 if size[1] < MAX else size[1]), size[1]
    elif new[1] <= old[0]:
        count_max, kept_max = 0, size[1]
    else:
        count_max, kept_max = math.ceil(size[1] / old[0]), 0
    if old[1] == 0:
        count_min, kept_min = (size[0] + 1 if size[0] < MAX else size[0]), size[0]
    elif old[1] <= new[0]:
        count_min, kept_min = 0, size[0]
    else:
        count_min, kept_min = math.ceil(size[0] / old[1]), 0
    result = add(mul((count_min, count_max), new), (kept_min, kept_max))
    return factor(size, 2 * STRING_TRAVERSAL), result


def _join(target: Node, args: list[Node], size_of: Callable[[Node], Est]) -> tuple[Est, Est | None]:
    count = size_of(target)
    size: Est = (0, 0)
    elem = _elem_node(target)
    if elem is not None:
        size = mul(count, size_of(elem))
    if args:
        separators = (max(count[0] - 1, 0), max(count[1] - 1, 0))
        size = add(size, mul(size_of(args[0]), separators))
    return factor(size, STRING_TRAVERSAL), size


def _contains_net(fn: str, overload: str, arg: Node, size_of: Callable[[Node], Est]) -> Est:
    width: Est = (4, 16)
    cost = factor(add(width, width), STRING_TRAVERSAL)
    if fn == "containsCIDR":
        cost = add(add(cost, factor(width, STRING_TRAVERSAL)), ONE)
    if overload.endswith("_string"):
        cost = add(cost, factor(size_of(arg), STRING_TRAVERSAL))
    return cost
