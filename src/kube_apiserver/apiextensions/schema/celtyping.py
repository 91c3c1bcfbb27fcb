"""The part of cel-go's type checker (checker/checker.go) that rules need and the interpreter lacks:
every node of a rule gets a type (from the schema for ``self``/``oldSelf``, from the function for a
call) and the overloads a call resolves to, which the cost estimate prices.

Errors are reported only where cel-go's certainly are: a field an object's schema does not declare
(``undefined field 'x'``), a binary operator between a string, bytes or bool and a value of another
kind (``found no matching overload for '_+_' applied to '(int, string)'``). Anything this checker
cannot type is ``dyn``, which cel-go would also let through to run time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .celast import Call, Comprehension, Expr, Ident, ListExpr, Literal, MapExpr, Select, StructExpr
from .celtypes import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    TYPE,
    UINT,
    CelType,
    list_of,
    map_of,
    optional_of,
    simple,
)

TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "type", "null_type",
                        "dyn", "optional_type"})
URL = simple("opaque", "kubernetes.URL")
QUANTITY = simple("opaque", "kubernetes.Quantity")
SEMVER = simple("opaque", "kubernetes.Semver")
IP = simple("opaque", "net.IP")
CIDR = simple("opaque", "net.CIDR")
NAMED_FORMAT = simple("opaque", "kubernetes.NamedFormat")
_LITERALS = {"int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bytes": BYTES, "bool": BOOL,
             "null": NULL}
_CONVERSIONS = {"int": INT, "uint": UINT, "double": DOUBLE, "string": STRING, "bytes": BYTES, "bool": BOOL,
                "duration": DURATION, "timestamp": TIMESTAMP, "dyn": DYN, "type": TYPE}
_RELATIONS = {"_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals"}
_ARITHMETIC = frozenset({"_+_", "_-_", "_*_", "_/_", "_%_"})
_PLAIN = frozenset({"int", "uint", "double", "string", "bytes", "bool"})
_NUMERIC = frozenset({"int", "uint", "double"})
# results of library functions that do not depend on their arguments
_RESULTS: dict[str, CelType] = {
    "size": INT, "matches": BOOL, "startsWith": BOOL, "endsWith": BOOL, "contains": BOOL, "charAt": STRING,
    "lowerAscii": STRING, "upperAscii": STRING, "replace": STRING, "substring": STRING, "trim": STRING,
    "join": STRING, "format": STRING, "strings.quote": STRING, "split": list_of(STRING), "find": STRING,
    "findAll": list_of(STRING), "isSorted": BOOL, "sets.contains": BOOL, "sets.equivalent": BOOL,
    "sets.intersects": BOOL, "url": URL, "isURL": BOOL, "getScheme": STRING, "getHost": STRING,
    "getHostname": STRING, "getPort": STRING, "getEscapedPath": STRING,
    "getQuery": map_of(STRING, list_of(STRING)), "quantity": QUANTITY, "isQuantity": BOOL, "sign": INT,
    "isInteger": BOOL, "asInteger": INT, "asApproximateFloat": DOUBLE, "isGreaterThan": BOOL,
    "isLessThan": BOOL, "compareTo": INT, "cidr": CIDR, "isIP": BOOL, "isCIDR": BOOL, "ip.isCanonical": BOOL,
    "family": INT, "isUnspecified": BOOL, "isLoopback": BOOL, "isLinkLocalMulticast": BOOL,
    "isLinkLocalUnicast": BOOL, "isGlobalUnicast": BOOL, "containsIP": BOOL, "containsCIDR": BOOL,
    "prefixLength": INT, "masked": CIDR, "semver": SEMVER, "isSemver": BOOL, "major": INT, "minor": INT,
    "patch": INT, "format.named": NAMED_FORMAT, "validate": optional_of(list_of(STRING)), "hasValue": BOOL,
    "@not_strictly_false": BOOL, "!_": BOOL, "_&&_": BOOL, "_||_": BOOL, "_==_": BOOL, "_!=_": BOOL,
    "@in": BOOL, "_<_": BOOL, "_<=_": BOOL, "_>_": BOOL, "_>=_": BOOL, "optional.none": optional_of(DYN),
    **{name: INT for name in ("getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear",
                              "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds")},
}


@dataclass
class Checked:
    """The checker's output: a type per node, the overloads per call, and the issues found."""

    types: dict[Expr, CelType] = field(default_factory=dict)
    overloads: dict[Expr, list[str]] = field(default_factory=dict)
    issues: list[tuple[int, str]] = field(default_factory=list)

    def type_of(self, e: Expr) -> CelType:
        return self.types.get(e, DYN)


class _Checker:
    def __init__(self, variables: dict[str, CelType]) -> None:
        self.scopes: list[dict[str, CelType]] = [variables]
        self.out = Checked()

    def check(self, e: Expr) -> CelType:
        t = self._check(e)
        self.out.types[e] = t
        return t

    def _check(self, e: Expr) -> CelType:
        if isinstance(e, Literal):
            return _LITERALS[e.kind]
        if isinstance(e, Ident):
            return self._ident(e.name)
        if isinstance(e, Select):
            return self._select(e)
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, ListExpr):
            elems = [self.check(x) for x in e.elements]
            return list_of(_join(elems))
        if isinstance(e, MapExpr):
            keys = [self.check(k) for k, _ in e.entries]
            values = [self.check(v) for _, v in e.entries]
            return map_of(_join(keys), _join(values))
        if isinstance(e, Comprehension):
            return self._comprehension(e)
        if isinstance(e, StructExpr):
            for _, value in e.fields:
                self.check(value)
        return DYN

    def _ident(self, name: str) -> CelType:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return TYPE if name in TYPE_NAMES else DYN

    def _select(self, e: Select) -> CelType:
        operand = self.check(e.operand)
        found = self._field(operand, e.field, e.pos)
        return BOOL if e.test_only else found

    def _field(self, t: CelType, name: str, pos: int) -> CelType:
        if t.kind == "object" and t.fields is not None:
            if name not in t.fields:
                self.out.issues.append((pos, f"undefined field '{name}'"))
                return DYN
            return t.fields[name]
        if t.kind == "map" and t.elem is not None:
            return t.elem
        return DYN

    def _comprehension(self, e: Comprehension) -> CelType:
        range_type = self.check(e.iter_range)
        accu = self.check(e.accu_init)
        if range_type.kind == "list":
            var = range_type.elem or DYN
        elif range_type.kind == "map":
            var = range_type.key or DYN
        else:
            var = DYN
        self.scopes.append({e.iter_var: var, e.accu_var: accu})
        self.check(e.loop_condition)
        step = self.check(e.loop_step)
        if accu.kind == "list" and step.kind == "list":
            self.scopes[-1][e.accu_var] = step  # the list the step builds: map()'s element type
        result = self.check(e.result)
        self.scopes.pop()
        return result

    def _call(self, e: Call) -> CelType:
        target = self.check(e.target) if e.target is not None else None
        args = [self.check(a) for a in e.args]
        handler = _HANDLERS.get(e.function)
        if handler is not None:
            result, overloads = handler(self, e, target, args)
        else:
            result, overloads = _library(e.function, target, args), [e.function]
        self.out.overloads[e] = overloads
        return result

    def mismatch(self, e: Call, args: list[CelType]) -> bool:
        """Report a binary operator between plain types of kinds no overload takes together."""
        kinds = {a.kind for a in args}
        if len(args) != 2 or not kinds <= _PLAIN or len(kinds) == 1 or kinds <= _NUMERIC:
            return False
        shown = ", ".join(a.show() for a in args)
        self.out.issues.append((e.pos, f"found no matching overload for '{e.function}' applied to '({shown})'"))
        return True


def _join(types: list[CelType]) -> CelType:
    """The type of a literal's elements: the common one, else dyn."""
    if types and all(t.kind == types[0].kind for t in types) and types[0].kind not in ("list", "map", "object"):
        return types[0]
    return DYN


def _library(name: str, target: CelType | None, args: list[CelType]) -> CelType:
    receiver = target if target is not None else (args[0] if args else DYN)
    if name in _CONVERSIONS:
        return _CONVERSIONS[name]
    if name in ("sum", "min", "max") and receiver.kind == "list":
        return receiver.elem or DYN
    if name in ("indexOf", "lastIndexOf"):
        return INT
    if name in ("slice", "distinct", "sort", "reverse"):
        return receiver if receiver.kind in ("list", "string") else DYN
    if name == "ip":
        return IP
    if name in ("add", "sub"):
        return receiver if receiver.kind == "opaque" else DYN
    if name in ("optional.of", "optional.ofNonZeroValue"):
        return optional_of(args[0] if args else DYN)
    if name in ("value", "orValue"):
        if receiver.kind == "optional" and receiver.elem is not None:
            return receiver.elem
        return args[0] if name == "orValue" and args else DYN
    if name == "or":
        return receiver
    return _RESULTS.get(name, DYN)


Handler = Callable[[_Checker, Call, "CelType | None", list[CelType]], tuple[CelType, list[str]]]


def _equality(c: _Checker, e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    c.mismatch(e, args)
    return BOOL, ["equals" if e.function == "_==_" else "not_equals"]


def _relation(c: _Checker, e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    c.mismatch(e, args)
    base = _RELATIONS[e.function]
    kinds = {a.kind for a in args}
    overloads = [f"{base}_{k}" for k in ("string", "bytes") if k in kinds or kinds == {"dyn"}]
    return BOOL, overloads or [f"{base}_other"]


def _arithmetic(c: _Checker, e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    if c.mismatch(e, args):
        return DYN, ["error"]
    known = [a for a in args if a.kind != "dyn"]
    if e.function == "_+_":
        kinds = {a.kind for a in known}
        if kinds & {"string", "bytes", "list"}:
            kind = next(k for k in ("string", "bytes", "list") if k in kinds)
            result = next(a for a in known if a.kind == kind)
            return result if kind != "list" else list_of(_join([a.elem or DYN for a in known])), [f"add_{kind}"]
        if not known:
            return DYN, ["add_string", "add_bytes", "add_list", "add_other"]
        if kinds == {"timestamp", "duration"}:
            return TIMESTAMP, ["add_other"]
        return known[0], ["add_other"]
    if e.function == "_-_" and [a.kind for a in known] == ["timestamp", "timestamp"]:
        return DURATION, ["subtract_other"]
    return (known[0] if known else DYN), [f"{e.function}_other"]


def _index(_c: _Checker, e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    container = args[0]
    if container.kind == "list":
        return container.elem or DYN, ["index_list"]
    if container.kind == "map":
        return container.elem or DYN, ["index_map"]
    return DYN, ["index_list", "index_map"]


def _optional_access(c: _Checker, e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    container = args[0]
    if e.function == "_?._" and isinstance(e.args[1], Literal):
        return optional_of(c._field(container, str(e.args[1].value), e.pos)), ["select_optional_field"]
    inner = container.elem if container.kind in ("list", "map") and container.elem is not None else DYN
    return optional_of(inner), ["optional_index"]


def _in(_c: _Checker, _e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    container = args[1]
    if container.kind == "list":
        return BOOL, ["in_list"]
    if container.kind == "map":
        return BOOL, ["in_map"]
    return BOOL, ["in_list", "in_map"]


def _conditional(_c: _Checker, _e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    then, otherwise = args[1], args[2]
    same = then.kind == otherwise.kind and then.kind not in ("dyn", "opaque")
    return (then if same else DYN), ["conditional"]


def _logical(_c: _Checker, e: Call, _t: CelType | None, _a: list[CelType]) -> tuple[CelType, list[str]]:
    return BOOL, ["logical_and" if e.function == "_&&_" else "logical_or"]


def _negate(_c: _Checker, e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    return args[0], [e.function]


def _string_member(suffix: str) -> Handler:
    """matches/contains/startsWith/endsWith: the string overloads when called on a string."""
    def handler(_c: _Checker, e: Call, target: CelType | None, _a: list[CelType]) -> tuple[CelType, list[str]]:
        if target is None:
            return BOOL, [e.function]
        return BOOL, [f"{suffix}_string"] if target.kind in ("string", "dyn") else [e.function]
    return handler


def _format(_c: _Checker, e: Call, target: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    return STRING, ["string_format"] if target is not None else [e.function]


def _sets(_c: _Checker, e: Call, _t: CelType | None, _a: list[CelType]) -> tuple[CelType, list[str]]:
    return BOOL, [f"list_{e.function.replace('.', '_')}_list"]


def _ip(_c: _Checker, e: Call, target: CelType | None, _a: list[CelType]) -> tuple[CelType, list[str]]:
    return IP, ["cidr_ip"] if target is not None else ["string_to_ip"]


def _contains_net(_c: _Checker, e: Call, _t: CelType | None, args: list[CelType]) -> tuple[CelType, list[str]]:
    kind = "ip" if e.function == "containsIP" else "cidr"
    arg = "string" if args and args[0].kind == "string" else kind
    return BOOL, [f"cidr_contains_{kind}_{arg}"]


_HANDLERS: dict[str, Handler] = {
    "_==_": _equality, "_!=_": _equality, **{op: _relation for op in _RELATIONS},
    **{op: _arithmetic for op in _ARITHMETIC}, "_[_]": _index, "_[?_]": _optional_access,
    "_?._": _optional_access, "@in": _in, "_?_:_": _conditional, "_&&_": _logical, "_||_": _logical,
    "-_": _negate, "matches": _string_member("matches"), "contains": _string_member("contains"),
    "startsWith": _string_member("starts_with"), "endsWith": _string_member("ends_with"), "format": _format,
    "sets.contains": _sets, "sets.equivalent": _sets, "sets.intersects": _sets, "ip": _ip,
    "containsIP": _contains_net, "containsCIDR": _contains_net,
}


def check(e: Expr, variables: dict[str, CelType]) -> Checked:
    """Types and overloads of every node of ``e``, with the issues cel-go would report."""
    checker = _Checker(variables)
    checker.check(e)
    return checker.out
