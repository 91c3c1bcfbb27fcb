"""The Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library and the cel-go extensions the
base environment enables), as functions registered by name with the interpreter.

The interpreter calls a registered function by name alone (`x.f(a)` calls `f(x, a)`) and offers no
overload declarations, so each function checks its argument types itself and raises
`NoSuchOverload` on a mismatch. Where several libraries share a name (indexOf on strings and lists,
compareTo on quantities and semvers), a dispatcher tries them in turn."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kube_apiserver.cel.errors import NoSuchOverload
from kube_apiserver.cel.library import authz, lists, net, optional, quantity, regex, semver, strings, urls
from kube_apiserver.cel.library import format as format_lib

Function = Callable[..., Any]

# Names the interpreter implements natively, including the macros.
BUILTINS = frozenset({
    "size", "int", "uint", "double", "string", "bytes", "bool", "type", "dyn", "duration", "timestamp",
    "matches", "contains", "startsWith", "endsWith", "has", "all", "exists", "exists_one", "map", "filter",
    "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
    "getMilliseconds", "getMinutes", "getMonth", "getSeconds", "max",
    "optional.of", "optional.none", "optional.ofNonZeroValue", "hasValue", "value", "orValue", "or",
})


def _dispatcher(name: str, overloads: list[Function]) -> Function:
    def dispatch(*args: Any) -> Any:
        for overload in overloads:
            try:
                return overload(*args)
            except (NoSuchOverload, TypeError):
                # TypeError: the arity of this overload does not fit
                continue
        raise NoSuchOverload()

    dispatch.__name__ = name
    return dispatch


def _merge(libraries: Iterable[dict[str, Function]]) -> dict[str, Function]:
    grouped: dict[str, list[Function]] = {}
    for library in libraries:
        for name, function in library.items():
            grouped.setdefault(name, []).append(function)
    # every function goes through a dispatcher, so a call with the wrong arity is "no such overload"
    return {name: _dispatcher(name, fns) for name, fns in grouped.items()}


FUNCTIONS: dict[str, Function] = _merge([
    strings.FUNCTIONS, lists.FUNCTIONS, regex.FUNCTIONS, urls.FUNCTIONS, quantity.FUNCTIONS,
    net.FUNCTIONS, semver.FUNCTIONS, format_lib.FUNCTIONS, optional.FUNCTIONS, authz.FUNCTIONS,
])

# Namespaces of qualified function names ("sets.contains"): not variables when followed by a call.
NAMESPACES = frozenset(name.split(".")[0] for name in [*FUNCTIONS, *BUILTINS] if "." in name)
KNOWN = BUILTINS | FUNCTIONS.keys()
