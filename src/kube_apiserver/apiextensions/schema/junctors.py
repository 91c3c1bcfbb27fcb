"""allOf/anyOf/oneOf of kube-openapi's schemaPropsValidator, with its choice of the reported branch
(the failing branch with the highest MatchCount, the first one on ties)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...apimachinery.field import go_quote
from .openapierrors import COMPOSITE, Err

if TYPE_CHECKING:
    from .openapi import _Node


def branch(node: _Node, v: Any, name: str) -> tuple[list[Err], int]:
    errs: list[Err] = []
    mc = node.check(v, name, errs)
    return errs, mc


def any_of(nodes: list[_Node], v: Any, name: str, errs: list[Err]) -> int:
    best: tuple[list[Err], int] | None = None
    for node in nodes:
        result = branch(node, v, name)
        if not result[0]:
            return result[1]
        if best is None or result[1] > best[1]:
            best = result
    errs.append((COMPOSITE, name, None, None, f"{go_quote(name)} must validate at least one schema (anyOf)"))
    assert best is not None
    errs.extend(best[0])
    return best[1]


def one_of(nodes: list[_Node], v: Any, name: str, errs: list[Err]) -> int:
    best: tuple[list[Err], int] | None = None
    first_success: int | None = None
    validated = 0
    for node in nodes:
        result = branch(node, v, name)
        if not result[0]:
            validated += 1
            best = None
            if first_success is None:
                first_success = result[1]
        elif validated == 0 and (best is None or result[1] > best[1]):
            best = result
    if validated == 1:
        assert first_success is not None
        return first_success
    detail = "Found none valid" if validated == 0 else f"Found {validated} valid alternatives"
    errs.append((COMPOSITE, name, None, None,
                 f"{go_quote(name)} must validate one and only one schema (oneOf). {detail}"))
    if best is None:
        return 0
    errs.extend(best[0])
    return best[1]


def all_of(nodes: list[_Node], v: Any, name: str, errs: list[Err]) -> int:
    validated, mc = 0, 0
    for node in nodes:
        branch_errs, branch_mc = branch(node, v, name)
        mc += branch_mc
        if not branch_errs:
            validated += 1
        errs.extend(branch_errs)
    if validated != len(nodes):
        detail = ". None validated" if validated == 0 else ""
        errs.append((COMPOSITE, name, None, None, f"{go_quote(name)} must validate all the schemas (allOf){detail}"))
    return mc
