"""The CEL part of schema validation (the x-kubernetes-validations loop of
ValidateCustomResourceDefinitionOpenAPISchema, CELSchemaContext cardinalities, TotalCost): rules are
compiled per schema node by the schema package; limits, error mapping and oldSelf correlation are here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...apimachinery import field as f
from ...apimachinery.field import ErrorList, Path
from . import structural
from .gostruct import rule_struct
from .options import Options

Object = dict[str, Any]
STATIC_ESTIMATED_COST_LIMIT = 10_000_000
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000
_MAX_UINT64 = 2**64 - 1


@dataclass(frozen=True)
class CELContext:
    """CELSchemaContext: how many values of this node one object may hold (None: unbounded)."""

    max_cardinality: int | None = 1

    def child(self, parent: Object) -> CELContext:
        if self.max_cardinality is None:
            return CELContext(None)
        factor = _max_elements(parent)
        return CELContext(None if factor is None else _multiply(self.max_cardinality, factor))


def _max_elements(s: Object) -> int | None:
    """extractMaxElements: the factor by which a node multiplies its children's cardinality."""
    if s.get("type") == "object":
        if s.get("additionalProperties") is None:
            return 1
        limit = s.get("maxProperties")
    elif s.get("type") == "array":
        limit = s.get("maxItems")
    else:
        return 1
    return None if not isinstance(limit, int) else max(limit, 0)


def _multiply(base: int, factor: int) -> int:
    """multiplyWithOverflowGuard (uint64)."""
    if base == 0:
        return 0
    return _MAX_UINT64 if _MAX_UINT64 // base < factor else base * factor


@dataclass(frozen=True)
class CELNode:
    """A schema node whose x-kubernetes-validations get compiled."""

    path: Path
    schema: Object
    uncorrelatable_path: Path | None
    context: CELContext
    is_root: bool = False  # a resource root: apiVersion, kind and metadata are visible to rules


@dataclass
class TotalCost:
    total: int = 0
    most_expensive: list[tuple[Path, int]] = field(default_factory=list)

    def observe(self, path: Path, cost: int) -> None:
        self.total = min(self.total + cost, _MAX_UINT64)
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT // 100:
            return  # below 1% of the limit: never named as a main contributor
        self.most_expensive.append((path, cost))
        self.most_expensive.sort(key=lambda pc: pc[1], reverse=True)
        del self.most_expensive[4:]


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """getCostErrorMessage."""
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, "
        "maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def cel_errors(nodes: list[CELNode], schema_path: Path, opts: Options) -> ErrorList:
    """Compile the rules of every node (post-order, as upstream reports them), then the total cost."""
    total = TotalCost()
    errs: ErrorList = []
    for node in nodes:
        errs += _node_errors(node, opts, total)
    if total.total > STATIC_ESTIMATED_CRD_COST_LIMIT:
        for path, _ in total.most_expensive:
            errs.append(
                f.forbidden(
                    path,
                    "contributed to estimated rule cost total exceeding cost limit for entire "
                    "OpenAPIv3 schema",
                )
            )
        errs.append(
            f.forbidden(
                schema_path,
                cost_error_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    total.total,
                    STATIC_ESTIMATED_CRD_COST_LIMIT,
                ),
            )
        )
    return errs


def _node_errors(node: CELNode, opts: Options, total: TotalCost) -> ErrorList:
    rules = [r if isinstance(r, dict) else {} for r in node.schema.get("x-kubernetes-validations") or []]
    compiled = structural.compile_node(node.schema, rules, node.is_root)
    errs: ErrorList = []
    for i, rule in enumerate(rules):
        rule_path = node.path.child("x-kubernetes-validations").index(i)
        result = compiled[i] if compiled is not None else None
        if result is not None:
            errs += _compiled_errors(result, rule, rule_path, node, opts, total)
            uses_old_self = bool(result.uses_old_self)
        else:  # no compiler: decide transition rules from the text alone
            uses_old_self = uses_old_self_text(rule.get("rule") or "")
        errs += _old_self_errors(rule, rule_path, uses_old_self, node.uncorrelatable_path)
    return errs


def _compiled_errors(
    result: Any, rule: Object, rule_path: Path, node: CELNode, opts: Options, total: TotalCost
) -> ErrorList:
    errs: ErrorList = []
    cardinality = node.context.max_cardinality
    cost = _multiply(result.max_cost, cardinality if cardinality is not None else result.max_cardinality)
    if not opts.suppress_per_expression_cost and cost > STATIC_ESTIMATED_COST_LIMIT:
        errs.append(
            f.forbidden(
                rule_path.child("rule"),
                cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT),
            )
        )
    total.observe(rule_path.child("rule"), cost)
    if result.error is not None:
        if result.error_type == "Required":
            errs.append(f.required(rule_path.child("rule"), result.error))
        else:
            errs.append(f.invalid(rule_path.child("rule"), rule_struct(rule), result.error))
    if result.message_error is not None:
        errs.append(f.invalid(rule_path.child("messageExpression"), rule_struct(rule), result.message_error))
    elif result.message_program is not None:
        if not opts.suppress_per_expression_cost and result.message_max_cost > STATIC_ESTIMATED_COST_LIMIT:
            errs.append(
                f.forbidden(
                    rule_path.child("messageExpression"),
                    cost_error_message(
                        "estimated messageExpression cost",
                        result.message_max_cost,
                        STATIC_ESTIMATED_COST_LIMIT,
                    ),
                )
            )
        total.observe(rule_path.child("messageExpression"), result.message_max_cost)
    return errs


def _old_self_errors(
    rule: Object, rule_path: Path, uses_old_self: bool, uncorrelatable: Path | None
) -> ErrorList:
    if uses_old_self:
        if uncorrelatable is None:
            return []
        return [
            f.invalid(
                rule_path.child("rule"),
                rule.get("rule") or "",
                f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}",
            )
        ]
    if rule.get("optionalOldSelf") is not None:
        return [
            f.invalid(
                rule_path.child("optionalOldSelf"),
                rule["optionalOldSelf"],
                "may not be set if oldSelf is not used in rule",
            )
        ]
    return []


_STRING_LITERAL = re.compile(
    r"""[rRbB]{0,2}('''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")""", re.DOTALL
)
_OLD_SELF = re.compile(r"(?<![\w.])oldSelf(?!\w)")


def uses_old_self_text(rule: str) -> bool:
    """Whether a CEL rule references the oldSelf variable (outside string literals, not as a field)."""
    return bool(_OLD_SELF.search(_STRING_LITERAL.sub('""', rule)))
