"""The CEL part of CRD schema validation (apis/apiextensions/validation: validation.go's rule
compilation and cost checks, cel_validation.go's cardinality and total cost).

:func:`compile_rules` walks a structural schema as ValidateCustomResourceDefinitionOpenAPISchema
does and reports, per rule: compile errors, messageExpression compile errors, estimated costs over
the per-expression limit (the estimate times how many values the rule may run on), transition
rules under lists that cannot correlate, ``optionalOldSelf`` on rules without ``oldSelf``; and at
the end the total cost of the whole schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field

from ...apimachinery import field
from ...apimachinery.field import ErrorList, ErrorType, FieldError, Path, go_quote
from ...cel.cost import cost_error_message
from .celcompile import CompiledRule, compile_node
from .structural import Structural, ValidationRule

STATIC_ESTIMATED_COST_LIMIT = 10_000_000
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000
_MAX_UINT64 = (1 << 64) - 1


@dataclass
class TotalCost:
    """The summed estimated cost of a schema's rules and the (up to 4) most expensive ones."""

    total: int = 0
    most_expensive: list[tuple[Path, int]] = dataclass_field(default_factory=list)

    def observe(self, path: Path, cost: int) -> None:
        self.total = min(self.total + cost, _MAX_UINT64)
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT // 100:  # under 1% of the limit
            return
        self.most_expensive.append((path, cost))
        self.most_expensive.sort(key=lambda item: -item[1])
        del self.most_expensive[4:]


def _multiply(base: int, cardinality: int) -> int:
    return 0 if base == 0 else min(base * cardinality, _MAX_UINT64)


def _max_elements(s: Structural) -> int | None:
    """extractMaxElements: children per value of ``s`` (None = unbounded)."""
    vv = s.value_validation
    if s.type == "object":
        if s.additional_properties is not None:
            return max(vv.max_properties, 0) if vv and vv.max_properties is not None else None
        return 1
    if s.type == "array":
        return max(vv.max_items, 0) if vv and vv.max_items is not None else None
    return 1


def _child_cardinality(parent: Structural, cardinality: int | None) -> int | None:
    if cardinality is None:
        return None
    elements = _max_elements(parent)
    return None if elements is None else min(cardinality * elements, _MAX_UINT64)


def go_syntax_rule(rule: ValidationRule) -> str:
    """``%#v`` of the internal apiextensions.ValidationRule, as field errors print it."""
    reason = ("(*apiextensions.FieldValueErrorReason)(nil)" if rule.reason is None
              else "(*apiextensions.FieldValueErrorReason)(0xc000000000)")
    optional = "(*bool)(nil)" if rule.optional_old_self is None else "(*bool)(0xc000000000)"
    return (f"apiextensions.ValidationRule{{Rule:{go_quote(rule.rule)}, Message:{go_quote(rule.message)}, "
            f"MessageExpression:{go_quote(rule.message_expression)}, Reason:{reason}, "
            f"FieldPath:{go_quote(rule.field_path)}, OptionalOldSelf:{optional}}}")


def _invalid_rule(path: Path, rule: ValidationRule, detail: str) -> FieldError:
    # the bad value is a Go struct printed with %#v, which FieldError cannot format itself
    return FieldError(ErrorType.INVALID, str(path), field.OMIT_VALUE, f"{go_syntax_rule(rule)}: {detail}")


@dataclass
class _Walk:
    suppress_per_expression_cost: bool
    total: TotalCost
    errs: ErrorList


def compile_rules(s: Structural | None, path: Path, suppress_per_expression_cost: bool = False) -> ErrorList:
    """The x-kubernetes-validations errors of a (valid, structural) schema rooted at ``path``."""
    if s is None:
        return []
    walk = _Walk(suppress_per_expression_cost, TotalCost(), [])
    _node(s, path, 1, None, walk)
    if walk.total.total > STATIC_ESTIMATED_CRD_COST_LIMIT:
        for expensive_path, _ in walk.total.most_expensive:
            walk.errs.append(field.forbidden(expensive_path, "contributed to estimated rule cost total exceeding "
                                                             "cost limit for entire OpenAPIv3 schema"))
        walk.errs.append(field.forbidden(path, cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            walk.total.total, STATIC_ESTIMATED_CRD_COST_LIMIT)))
    return walk.errs


def _node(s: Structural, path: Path, cardinality: int | None, uncorrelatable: Path | None, walk: _Walk) -> None:
    if s.x_validations:
        for i, compiled in enumerate(compile_node(s)):
            _check_rule(compiled, path.child("x-kubernetes-validations").index(i), cardinality, uncorrelatable, walk)
    child_cardinality = _child_cardinality(s, cardinality)
    if s.additional_properties is not None and s.additional_properties.structural is not None:
        _node(s.additional_properties.structural, path.child("additionalProperties"), child_cardinality,
              uncorrelatable, walk)
    for key, prop in (s.properties or {}).items():
        _node(prop, path.child("properties").key(key), child_cardinality, uncorrelatable, walk)
    if s.items is not None:
        # only map lists correlate their items between revisions
        items_uncorrelatable = uncorrelatable or (path if s.x_list_type != "map" else None)
        _node(s.items, path.child("items"), child_cardinality, items_uncorrelatable, walk)


def _check_rule(cr: CompiledRule, path: Path, cardinality: int | None, uncorrelatable: Path | None,
                walk: _Walk) -> None:
    errs, rule = walk.errs, cr.rule
    cost = _multiply(cr.max_cost, cardinality if cardinality is not None else cr.max_cardinality)
    if not walk.suppress_per_expression_cost and cost > STATIC_ESTIMATED_COST_LIMIT:
        errs.append(field.forbidden(path.child("rule"), cost_error_message("estimated rule cost", cost)))
    walk.total.observe(path.child("rule"), cost)
    if cr.error is not None:
        if cr.error_type == "Required":
            errs.append(field.required(path.child("rule"), cr.error))
        else:
            errs.append(_invalid_rule(path.child("rule"), rule, cr.error))
    if cr.message_error is not None:
        errs.append(_invalid_rule(path.child("messageExpression"), rule, cr.message_error))
    elif cr.message_program is not None:
        if not walk.suppress_per_expression_cost and cr.message_max_cost > STATIC_ESTIMATED_COST_LIMIT:
            errs.append(field.forbidden(path.child("messageExpression"),
                                        cost_error_message("estimated messageExpression cost", cr.message_max_cost)))
        walk.total.observe(path.child("messageExpression"), cr.message_max_cost)
    if cr.uses_old_self:
        if uncorrelatable is not None:
            errs.append(field.invalid(path.child("rule"), rule.rule, "oldSelf cannot be used on the uncorrelatable "
                                                                     f"portion of the schema within {uncorrelatable}"))
    elif rule.optional_old_self is not None:
        errs.append(field.invalid(path.child("optionalOldSelf"), rule.optional_old_self,
                                  "may not be set if oldSelf is not used in rule"))
