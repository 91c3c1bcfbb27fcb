"""Run-time cost of a rule, estimated (the interpreter tracks none).

cel-go charges the actual cost of each evaluation against the per-call limit and the request's
budget. Here the static estimator runs on the sizes of the values actually bound: lists, maps
and strings along the paths the rule iterates or scans, rounded up to a power of two so that the
estimate of a rule is cached per size class. A rule whose cost does not depend on sizes is
charged its constant estimate.
"""

from __future__ import annotations

from typing import Any

from ... import cel

_CACHE_LIMIT = 256


def _quantize(n: int) -> int:
    return n if n <= 2 else 1 << (n - 1).bit_length()


def size_at(root: dict[str, Any], path: str) -> int:
    """The largest size of the values at a dotted path ("self.spec.items[*].name")."""
    parts = path.replace("[*]", ".[*]").split(".")
    if parts[0] not in root:
        return 0
    values = [root[parts[0]]]
    for part in parts[1:]:
        found: list[Any] = []
        for value in values:
            if part == "[*]":
                if isinstance(value, list):
                    found.extend(value)
                elif isinstance(value, dict):
                    found.extend(value.values())
            elif isinstance(value, dict) and part in value:
                found.append(value[part])
        if not found:
            return 0
        values = found
    return max((len(v) for v in values if isinstance(v, list | dict | str | bytes)), default=0)


class RuntimeCost:
    """The estimated cost of evaluating one expression against an activation."""

    __slots__ = ("expression", "constant", "_paths", "_cache")

    def __init__(self, expression: str, constant: int | None) -> None:
        self.expression = expression
        self.constant = constant
        self._paths: tuple[str, ...] | None = None
        self._cache: dict[tuple[int, ...], int] = {}

    def _record_paths(self) -> tuple[str, ...]:
        seen: list[str] = []

        def lookup(path: str) -> int:
            if path not in seen:
                seen.append(path)
            return 0
        cel.estimate_cost(self.expression, lookup, 0, 0)
        return tuple(seen)

    def of(self, activation: dict[str, Any]) -> int:
        if self.constant is not None:
            return self.constant
        if self._paths is None:
            self._paths = self._record_paths()
        sizes = tuple(_quantize(size_at(activation, p)) for p in self._paths)
        cost = self._cache.get(sizes)
        if cost is None:
            cost = cel.estimate_cost(self.expression, dict(zip(self._paths, sizes, strict=True)), 0, 0).max
            if len(self._cache) < _CACHE_LIMIT:
                self._cache[sizes] = cost
        return cost
