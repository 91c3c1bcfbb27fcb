"""Values crossing the interpreter boundary.

The interpreter converts arguments and results through a fixed set of Python types (None, bool, int,
float, str, bytes, list, dict, datetime, timedelta, cel.OptionalValue); any other object returned by
a function is rejected ("Failed to convert Python object of type X to Value"). Kubernetes' opaque CEL
types (Quantity, URL, IP, CIDR, Semver, NamedFormat) are therefore carried as *tagged maps*: a dict
with a single key "\\x00<type name>" whose value is the canonical text of the value. Because the text
is canonical, CEL's map equality gives the types' own equality (quantity('1Ki') == quantity('1024'),
ip('::1') == cidr('::1/128').ip()). What a map cannot imitate: type() reports `map`, size() is 1, and
comparing a tag with a non-tag is `false` where cel-go reports "no such overload"."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kube_apiserver.cel.errors import NoSuchOverload

QUANTITY = "kubernetes.Quantity"
URL = "kubernetes.URL"
IP = "net.IP"
CIDR = "net.CIDR"
SEMVER = "kubernetes.Semver"
FORMAT = "kubernetes.NamedFormat"
_MARK = "\x00"


@dataclass(frozen=True)
class Opaque:
    """An opaque CEL value returned to Python: its CEL type name and canonical text."""

    type_name: str
    value: str

    def __str__(self) -> str:
        return self.value


def tag(type_name: str, text: str) -> dict[str, str]:
    return {_MARK + type_name: text}


def tag_type(value: Any) -> str | None:
    """The opaque type a tagged map carries, or None for any other value."""
    if type(value) is dict and len(value) == 1:
        key = next(iter(value))
        if type(key) is str and key.startswith(_MARK):
            return key[1:]
    return None


def untag(value: Any, type_name: str) -> str:
    """The text of a tagged value of `type_name`; any other argument is an overload mismatch."""
    if type(value) is dict and len(value) == 1:
        text = value.get(_MARK + type_name)
        if text is not None:
            return text
    raise NoSuchOverload()


def from_cel(value: Any) -> Any:
    """A result as plain Python: tagged maps become `Opaque`, containers are converted deeply."""
    kind = type(value)
    if kind is dict:
        name = tag_type(value)
        if name is not None:
            return Opaque(name, next(iter(value.values())))
        return {key: from_cel(item) for key, item in value.items()}
    if kind is list:
        return [from_cel(item) for item in value]
    return value


# ---- CEL equality and ordering (heterogeneous numeric equality, bool is not a number) ----


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def equal(a: Any, b: Any) -> bool:
    """CEL `==` on converted values: numbers compare across int/double, bools only with bools."""
    if _number(a) and _number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if type(a) is list:
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return a.keys() == b.keys() and all(equal(a[key], b[key]) for key in a)
    return bool(a == b)


_ORDERED = (str, bytes, bool, datetime, timedelta)


def compare(a: Any, b: Any) -> int:
    """cel-go `Compare`: -1, 0 or 1; values of unrelated types are an overload mismatch."""
    comparable = (_number(a) and _number(b)) or (type(a) is type(b) and type(a) in _ORDERED)
    if not comparable:
        raise NoSuchOverload()
    return (a > b) - (a < b)


def type_name(value: Any) -> str:
    """The CEL type name of a converted value, as cel-go prints it in messages."""
    name = tag_type(value)
    if name is not None:
        return name
    names = {bool: "bool", int: "int", float: "double", str: "string", bytes: "bytes", list: "list",
             dict: "map", type(None): "null_type", datetime: "google.protobuf.Timestamp",
             timedelta: "google.protobuf.Duration"}
    return names.get(type(value), "dyn")
